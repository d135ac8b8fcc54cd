import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBlobStore } from '../../db/blob-store';

/**
 * An S3-compatible store that accepts connections and then stops answering, before the headers or in the
 * middle of a body: every call gives up within its limits instead of holding the request open.
 */
describe('blob store timeouts', () => {
  let server: Server;
  let endpoint: string;
  const stalled: ServerResponse[] = [];
  let requests = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests += 1;
      stalled.push(res);
      // A download starts, then the store goes quiet with most of the body still to come.
      if (req.url?.includes('half-sent')) res.writeHead(200, { 'content-length': '1000', 'content-type': 'text/plain' }).write('x'.repeat(10));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of stalled) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const store = (maxAttempts: number) =>
    createBlobStore({
      bucket: 'stalled',
      region: 'us-east-1',
      endpoint,
      createBucket: false,
      limits: { connectMs: 500, requestMs: 400, idleMs: 400, maxAttempts },
    });

  it('a store that never answers fails the call after the request timeout, on each of maxAttempts tries', async () => {
    const blobs = store(2);
    const before = requests;
    const started = Date.now();
    await expect(blobs.put('never-answered', Buffer.from('file'), 'text/plain')).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(requests - before).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000);
    blobs.close();
  });

  it('a download that stalls mid-body fails after the idle timeout', async () => {
    const blobs = store(1);
    const started = Date.now();
    await expect(blobs.get('half-sent', 10_000)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3_000);
    blobs.close();
  });
});
