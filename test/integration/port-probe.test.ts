import { createServer } from 'node:net';
import { portAnswers } from '../../scripts/port-probe';
import { freePort } from '../helpers/free-port';

/** `npm start` sends mail through a relay already on SMTP_URL's port instead of starting the mail catcher there. */
describe('probing a port before starting a local server on it', () => {
  it('a port with a listening server answers', async () => {
    const server = createServer((socket) => {
      // The probe hangs up at once, maybe before the greeting is written.
      socket.on('error', () => undefined);
      socket.end('220 relay.local ESMTP\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      expect(await portAnswers('127.0.0.1', port)).toBe(true);
      expect(await portAnswers('localhost', port)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a closed port does not', async () => {
    expect(await portAnswers('127.0.0.1', await freePort())).toBe(false);
  });

  it('a host that never answers does not, within the timeout', async () => {
    const started = Date.now();
    // TEST-NET-1 (RFC 5737): routed nowhere, so the connection neither opens nor fails fast.
    expect(await portAnswers('192.0.2.1', 25, 300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
