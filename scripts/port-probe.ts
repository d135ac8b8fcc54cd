import { connect } from 'node:net';

/**
 * Whether something accepts TCP connections at host:port, decided within `timeoutMs`. `npm start` asks
 * before starting a local server on a port a developer's own server may already hold.
 */
export function portAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const settle = (answers: boolean) => {
      socket.destroy();
      resolve(answers);
    };
    socket.setTimeout(timeoutMs, () => settle(false));
    socket.once('connect', () => settle(true));
    socket.once('error', () => settle(false));
  });
}
