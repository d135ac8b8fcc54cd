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
  close: () => Promise<void>;
}

/** A real SMTP server on loopback that keeps what it receives, for tests of the SMTP provider. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  let failures = { count: 0, code: 0 };
  let hold: (() => void) | null = null;
  const options: SMTPServerOptions = {
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // The worker's pooled SMTP connections stay open; closing waits this long for them (default 30 s).
    closeTimeout: 200,
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
