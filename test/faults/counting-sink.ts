import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { sleep } from './processes';

/**
 * How the sink answers, as a provider would:
 * - `accept`: 250 (after `ackDelayMs`: the message is counted when its bytes arrive, so a worker killed while
 *   waiting for the answer leaves a message the provider has, which the worker never learned about);
 * - `throttle`: 421 to every message (slow down, try later);
 * - `down`: no new connections (refused), and 421 on the connections the worker still holds;
 * - `reject`: 550 to every message (a permanent refusal);
 * - `stall`: takes the bytes but neither keeps them nor answers for `stallMs`, then 451: a worker killed
 *   meanwhile died mid-call, before the provider accepted anything.
 */
export type SinkMode = 'accept' | 'throttle' | 'down' | 'reject' | 'stall';

export interface CountingSink {
  url: string;
  /** Our message id (the left part of the Message-ID header) → how many times the sink accepted it. */
  readonly deliveries: Map<string, number>;
  /** Our message id → the refusal codes it was answered with. */
  readonly refusals: Map<string, number[]>;
  /** Arrival time of the latest accepted message (epoch ms), for the time to recover. */
  lastDeliveryAt: () => number;
  /** Messages accepted (counted) whose answer is still being held (`ackDelayMs`). */
  heldAcks: () => number;
  /**
   * Calls stalled without an answer (`stall`). Kept apart from `heldAcks`: a stall outlives its scenario
   * (30 s), and a next scenario that counted it as a held acceptance killed the worker with none in flight.
   */
  stalledCalls: () => number;
  /** Deliveries of every message so far, repeats included. */
  deliveredTotal: () => number;
  /** Arrival times (epoch ms) of the deliveries accepted from `since` on, repeats included, in order. */
  deliveriesSince: (since: number) => number[];
  setMode: (mode: SinkMode, options?: { ackDelayMs?: number; stallMs?: number }) => Promise<void>;
  /** Answers 450 (greylisted, try again later) at RCPT TO for this address, the next `times` times. */
  greylist: (address: string, times: number) => void;
  close: () => Promise<void>;
}

interface SmtpError extends Error {
  responseCode: number;
}

const refusal = (code: number, text: string): SmtpError => Object.assign(new Error(text), { responseCode: code });

/** `<id@domain>` as providers/mime.ts writes it. */
function messageIdOf(raw: string): string {
  const header = /^message-id:\s*<([^@>]+)@/im.exec(raw.slice(0, raw.search(/\r?\n\r?\n/) + 1 || raw.length));
  return header ? header[1] : 'unknown';
}

export async function startCountingSink(): Promise<CountingSink> {
  const deliveries = new Map<string, number>();
  const refusals = new Map<string, number[]>();
  let mode: SinkMode = 'accept';
  let ackDelayMs = 0;
  let stallMs = 0;
  let total = 0;
  let lastDeliveryAt = 0;
  const arrivals: number[] = [];
  let held = 0;
  let stalled = 0;
  const greylisted = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 200,
    size: 10 * 1024 * 1024,
    onConnect(_session, callback) {
      callback(mode === 'down' ? refusal(421, 'service not available') : undefined);
    },
    onRcptTo(address, _session, callback) {
      const left = greylisted.get(address.address.toLowerCase()) ?? 0;
      if (left > 0) greylisted.set(address.address.toLowerCase(), left - 1);
      callback(left > 0 ? refusal(450, 'greylisted, please try again later') : undefined);
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const id = messageIdOf(Buffer.concat(chunks).toString('utf8'));
        if (mode === 'stall') {
          stalled += 1;
          void sleep(stallMs).then(() => {
            stalled -= 1;
            callback(refusal(451, 'stalled, try again'));
          });
          return;
        }
        const code = { accept: 0, throttle: 421, down: 421, reject: 550 }[mode];
        if (code) {
          refusals.set(id, [...(refusals.get(id) ?? []), code]);
          callback(refusal(code, code === 550 ? 'mailbox unavailable' : 'try again later'));
          return;
        }
        deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
        total += 1;
        lastDeliveryAt = Date.now();
        arrivals.push(lastDeliveryAt);
        if (!ackDelayMs) {
          callback();
          return;
        }
        held += 1;
        void sleep(ackDelayMs).then(() => {
          held -= 1;
          callback();
        });
      });
    },
  });
  // A worker killed mid-call resets its connections (ECONNRESET): a provider shrugs that off, and without a
  // listener the SMTP server's 'error' event would end the whole run (the final CI run saw it).
  server.on('error', () => undefined);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    deliveries,
    refusals,
    lastDeliveryAt: () => lastDeliveryAt,
    heldAcks: () => held,
    stalledCalls: () => stalled,
    deliveredTotal: () => total,
    deliveriesSince: (since) => arrivals.filter((at) => at >= since),
    async setMode(next, options = {}) {
      const wasDown = mode === 'down';
      mode = next;
      ackDelayMs = options.ackDelayMs ?? 0;
      stallMs = options.stallMs ?? 0;
      // Down means refused connections: the listener closes (the connections still open get 421s).
      // (close() stops listening at once; its callback would wait for the pooled connections to end.)
      if (next === 'down' && !wasDown) server.server.close();
      if (next !== 'down' && wasDown) await new Promise<void>((done) => server.server.listen(port, '127.0.0.1', done));
    },
    greylist(address, times) {
      greylisted.set(address.toLowerCase(), times);
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}
