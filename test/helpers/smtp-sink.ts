import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  recipients: string[];
  raw: string;
  /** When the sink accepted it (epoch ms). */
  at: number;
}

export interface SmtpSink {
  url: string;
  received: ReceivedMail[];
  /** Makes the next `count` transactions fail with this SMTP reply code (421 transient, 550 permanent). */
  failNext: (count: number, code: number) => void;
  /**
   * Holds the next message after its data arrived, before answering: the moment a provider has the
   * bytes but has not accepted them. `arrived` resolves then; the held message is never accepted.
   */
  holdNext: () => { arrived: Promise<void> };
  /**
   * Answers RCPT TO for the addresses `refusal` returns a reply for (e.g. `[550, '5.1.1 User unknown']`), as a
   * receiving server refuses an unknown mailbox; null accepts. Replaces the previous rule.
   */
  refuseRecipients: (refusal: (address: string) => readonly [number, string] | null) => void;
  /** Answers MAIL FROM with this reply (a relay that refuses our sender); null accepts again. */
  refuseSender: (refusal: readonly [number, string] | null) => void;
  close: () => Promise<void>;
}

/** A real SMTP server on loopback that keeps what it receives, for tests of the SMTP provider. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  let failures = { count: 0, code: 0 };
  let hold: (() => void) | null = null;
  let recipientRefusal: (address: string) => readonly [number, string] | null = () => null;
  let senderRefusal: readonly [number, string] | null = null;
  const refused = ([code, text]: readonly [number, string]) => Object.assign(new Error(text), { responseCode: code });
  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // The worker's pooled SMTP connections stay open; closing waits this long for them (default 30 s).
    closeTimeout: 200,
    onMailFrom(_address, _session, callback) {
      callback(senderRefusal ? refused(senderRefusal) : null);
    },
    onRcptTo(address, _session, callback) {
      const refusal = recipientRefusal(address.address);
      callback(refusal ? refused(refusal) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (hold) {
          hold();
          hold = null;
          return;
        }
        if (failures.count > 0) {
          failures = { ...failures, count: failures.count - 1 };
          const error = Object.assign(new Error('refused by the test sink'), { responseCode: failures.code });
          callback(error);
          return;
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          recipients: session.envelope.rcptTo.map((recipient) => recipient.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        callback();
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    failNext: (count, code) => {
      failures = { count, code };
    },
    holdNext: () => ({ arrived: new Promise<void>((resolve) => (hold = resolve)) }),
    refuseRecipients: (refusal) => {
      recipientRefusal = refusal;
    },
    refuseSender: (refusal) => {
      senderRefusal = refusal;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
