import { connect, type Socket } from 'node:net';

/**
 * A raw SMTP client session, for what a mail library will not do: hold a session open in the middle of DATA,
 * declare a SIZE, open connections and keep them idle. Each command answers the server's complete reply.
 */
export interface SmtpSession {
  /** The server's first reply (220, or 421 when it turns the connection away). */
  greeting: string;
  command: (line: string) => Promise<string>;
  /** Bytes without waiting for a reply (part of a message body). */
  write: (data: string | Buffer) => Promise<void>;
  /** Ends the body with the terminating dot and answers the server's reply to the message. */
  endData: () => Promise<string>;
  close: () => void;
}

export async function openSmtpSession(port: number): Promise<SmtpSession> {
  const socket: Socket = connect(port, '127.0.0.1');
  let buffered = '';
  let waiting: (() => void) | null = null;
  socket.on('data', (data: Buffer) => {
    buffered += data.toString('latin1');
    waiting?.();
  });
  socket.on('error', () => undefined);
  const next = () => new Promise<string>((resolve, reject) => {
    const take = () => {
      // A reply is complete at a line whose code is followed by a space (RFC 5321 §4.2.1).
      const end = buffered.search(/^\d{3} [^\r\n]*\r\n/m);
      if (end < 0) return false;
      const close = buffered.indexOf('\r\n', end) + 2;
      waiting = null;
      resolve(buffered.slice(0, close));
      buffered = buffered.slice(close);
      return true;
    };
    if (take()) return;
    waiting = () => void take();
    socket.once('close', () => reject(new Error(`connection closed; received so far: ${buffered}`)));
  });
  const write = (data: string | Buffer) => new Promise<void>((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));
  const greeting = await next();
  return {
    greeting,
    command: async (line) => {
      await write(`${line}\r\n`);
      return next();
    },
    write,
    endData: async () => {
      await write('\r\n.\r\n');
      return next();
    },
    close: () => socket.destroy(),
  };
}

/** Retries `check` until it passes or `timeoutMs` passed (then its last failure is thrown). */
export async function eventually(check: () => Promise<void>, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
