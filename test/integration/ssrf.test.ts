import { fetchPublicFile, postPublic, type PublicFetchOptions } from '../../infra/public-fetch';
import { guardSockets, type SocketGuard, type StandInServer, standInResolver, startStandInServer } from '../helpers/ssrf-stand-in';

/**
 * The SSRF rules of customer-given URLs, proven against a local HTTPS server that stands in for a public
 * host. Every refusal must happen before a socket is opened: the socket guard records each connection
 * attempt (and refuses any that is not loopback), and the stand-in counts the connections it accepts.
 */
const resolveHost = standInResolver({
  'files.test': ['127.0.0.1'],
  'cdn.files.test': ['127.0.0.1'],
  'loopback.test': ['127.0.0.1'],
  'loopback6.test': ['::1'],
  'compatible6.test': ['::7f00:1'],
  'internal.test': ['10.1.2.3'],
  'metadata.google.internal': ['169.254.169.254'],
  // One public and one private answer: the private one is enough to refuse the name.
  'mixed.test': ['93.184.216.34', '10.0.0.1'],
});

describe('fetching a customer-given URL', () => {
  let server: StandInServer;
  let guard: SocketGuard;
  let options: Partial<PublicFetchOptions>;
  const posted: Array<{ method: string; body: string; signature: string | undefined }> = [];

  beforeAll(async () => {
    guard = guardSockets();
    server = await startStandInServer({
      '/file.pdf': (_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7 stand-in'),
      '/redirect': (req, res) => {
        const to = new URL(req.url ?? '', 'https://files.test').searchParams.get('to') ?? '/';
        res.writeHead(302, { location: to }).end();
      },
      '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
      '/big': (_req, res) => res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) }).end(Buffer.alloc(2 * 1024 * 1024)),
      '/big-chunked': (_req, res) => {
        res.writeHead(200);
        for (let chunk = 0; chunk < 32; chunk += 1) res.write(Buffer.alloc(64 * 1024));
        res.end();
      },
      '/hook': (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          posted.push({ method: req.method ?? '', body: Buffer.concat(chunks).toString(), signature: req.headers['webhook-signature'] as string | undefined });
          res.writeHead(204).end();
        });
      },
      '/slow': () => {
        // Never answers: the fetch must give up on its own.
      },
    });
    options = { resolveHost, testOnlyPublicLoopbackPort: server.port, ca: server.ca, timeoutMs: 3_000 };
  });
  afterAll(async () => {
    await server.close();
    guard.restore();
  });

  /** Runs a fetch that must be refused, and proves no socket was opened for it. */
  async function expectRefusedWithoutConnecting(url: string, reason: string, overrides: Partial<PublicFetchOptions> = options) {
    const attempts = guard.attempts.length;
    const accepted = server.connections();
    await expect(fetchPublicFile(url, overrides)).rejects.toMatchObject({ name: 'PublicFetchError', reason });
    expect(guard.attempts.slice(attempts)).toEqual([]);
    expect(server.connections()).toBe(accepted);
  }

  it('a public https URL is fetched, and the socket goes to the address that was checked', async () => {
    const attempts = guard.attempts.length;
    const file = await fetchPublicFile(`https://files.test:${server.port}/file.pdf`, options);
    expect(file).toEqual({
      bytes: Buffer.from('%PDF-1.7 stand-in'),
      contentType: 'application/pdf',
      url: `https://files.test:${server.port}/file.pdf`,
    });
    // The guard sees the fetcher's sockets, so the "no attempt" assertions below are meaningful.
    expect(guard.attempts.slice(attempts)).toEqual([`127.0.0.1:${server.port}`]);
  });

  describe('loopback in any spelling is refused before connecting, though a server listens there', () => {
    const spellings = [
      '127.0.0.1', '127.1', '0x7f000001', '2130706433', '017700000001', '0177.0.0.1', '127.000.000.001', '127.0.0.2',
      '[::1]', '[::ffff:127.0.0.1]', '[0:0:0:0:0:ffff:7f00:1]', '[::7f00:1]', '[::127.0.0.1]', 'localhost', 'LOCALHOST.', 'app.localhost',
      'loopback.test', 'loopback6.test', 'compatible6.test',
    ];
    it.each(spellings)('%s', async (host) => {
      // Without the test-only exception the stand-in's own port is loopback like any other.
      await expectRefusedWithoutConnecting(`https://${host}:${server.port}/file.pdf`, 'blocked_address', { ...options, testOnlyPublicLoopbackPort: undefined });
    });

    it('the test-only exception covers one port of 127.0.0.1, not the mapped IPv6 spelling of it', async () => {
      await expectRefusedWithoutConnecting(`https://[::ffff:127.0.0.1]:${server.port}/file.pdf`, 'blocked_address');
      await expectRefusedWithoutConnecting(`https://127.0.0.1:${server.port + 1}/file.pdf`, 'blocked_address');
    });
  });

  describe('private, link-local, shared and metadata addresses are refused before connecting', () => {
    const targets = [
      '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.0.1', '192.168.255.254',
      '169.254.169.254', '169.254.170.2', '100.64.0.1', '100.127.255.254', '100.100.100.200', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '[::]', '[fc00::1]', '[fd00:ec2::254]', '[fe80::1]', '[::ffff:10.0.0.1]',
      '[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]', '[64:ff9b::a9fe:a9fe]', '[2002:a9fe:a9fe::]',
      'internal.test', 'metadata.google.internal', 'mixed.test',
    ];
    it.each(targets)('%s', async (host) => {
      await expectRefusedWithoutConnecting(`https://${host}/latest/meta-data/`, 'blocked_address');
    });
  });

  it('plain http is refused, even to an allowed host', async () => {
    await expectRefusedWithoutConnecting(`http://files.test:${server.port}/file.pdf`, 'not_https');
  });

  it('a URL with credentials is refused', async () => {
    await expectRefusedWithoutConnecting(`https://user:secret@files.test:${server.port}/file.pdf`, 'invalid_url');
  });

  it('a name that does not resolve is refused', async () => {
    await expectRefusedWithoutConnecting('https://unknown.test/file.pdf', 'unresolvable');
  });

  describe('a redirect from an allowed host is checked again', () => {
    const redirected = (to: string) => `https://files.test:${server.port}/redirect?to=${encodeURIComponent(to)}`;

    it.each([
      ['a private address', 'https://10.0.0.1/file.pdf', 'blocked_address'],
      ['the metadata address', 'https://169.254.169.254/latest/meta-data/iam/', 'blocked_address'],
      ['a name resolving inside', 'https://internal.test/file.pdf', 'blocked_address'],
      ['loopback by name', 'https://localhost/file.pdf', 'blocked_address'],
      ['plain http', 'http://files.test/file.pdf', 'not_https'],
    ])('to %s: refused, and only the first hop was connected', async (_label, to, reason) => {
      const attempts = guard.attempts.length;
      const requests = server.requests.length;
      await expect(fetchPublicFile(redirected(to), options)).rejects.toMatchObject({ reason });
      expect(guard.attempts.slice(attempts)).toEqual([`127.0.0.1:${server.port}`]);
      expect(server.requests.slice(requests)).toEqual([`/redirect?to=${encodeURIComponent(to)}`]);
    });

    it('to another allowed host: followed', async () => {
      const file = await fetchPublicFile(redirected(`https://cdn.files.test:${server.port}/file.pdf`), options);
      expect(file.bytes.toString()).toBe('%PDF-1.7 stand-in');
      expect(file.url).toBe(`https://cdn.files.test:${server.port}/file.pdf`);
    });

    it('in a loop: stops after the limit', async () => {
      await expect(fetchPublicFile(`https://files.test:${server.port}/loop`, { ...options, maxRedirects: 3 })).rejects.toMatchObject({
        reason: 'too_many_redirects',
      });
    });
  });

  describe('size and time are bounded', () => {
    it('a declared length over the limit is refused before the body is read', async () => {
      await expect(fetchPublicFile(`https://files.test:${server.port}/big`, { ...options, maxBytes: 1024 * 1024 })).rejects.toMatchObject({
        reason: 'too_large',
      });
    });

    it('a body without a length is cut off at the limit', async () => {
      await expect(
        fetchPublicFile(`https://files.test:${server.port}/big-chunked`, { ...options, maxBytes: 1024 * 1024 }),
      ).rejects.toMatchObject({ reason: 'too_large' });
    });

    it('a server that never answers is given up on', async () => {
      const started = Date.now();
      await expect(fetchPublicFile(`https://files.test:${server.port}/slow`, { ...options, timeoutMs: 300 })).rejects.toMatchObject({
        reason: 'timeout',
      });
      expect(Date.now() - started).toBeLessThan(2_000);
    });
  });

  it('an error status is a failure, not a file', async () => {
    await expect(fetchPublicFile(`https://files.test:${server.port}/missing`, options)).rejects.toMatchObject({ reason: 'http_status' });
  });

  it('a certificate that does not name the host is refused', async () => {
    const renamed = { ...options, resolveHost: standInResolver({ 'other.test': ['127.0.0.1'] }) };
    await expect(fetchPublicFile(`https://other.test:${server.port}/file.pdf`, renamed)).rejects.toMatchObject({ reason: 'network' });
  });

  describe('POSTing (webhook calls) follows the same rules', () => {
    const request = { body: '{"type":"email.sent"}', headers: { 'content-type': 'application/json', 'webhook-signature': 'v1,abc' } };

    it('a public https URL gets the body and headers, and the answer is its status', async () => {
      const attempts = guard.attempts.length;
      expect(await postPublic(`https://files.test:${server.port}/hook`, request, options)).toEqual({ statusCode: 204 });
      expect(posted.at(-1)).toEqual({ method: 'POST', body: request.body, signature: 'v1,abc' });
      expect(guard.attempts.slice(attempts)).toEqual([`127.0.0.1:${server.port}`]);
    });

    it.each(['10.0.0.1', '169.254.169.254', 'internal.test', 'mixed.test', 'localhost'])('%s is refused before connecting', async (host) => {
      const attempts = guard.attempts.length;
      await expect(postPublic(`https://${host}/hook`, request, options)).rejects.toMatchObject({ reason: 'blocked_address' });
      expect(guard.attempts.slice(attempts)).toEqual([]);
    });

    it('a redirect is an answer, never followed', async () => {
      const requests = server.requests.length;
      const to = 'https://internal.test/hook';
      expect(await postPublic(`https://files.test:${server.port}/redirect?to=${encodeURIComponent(to)}`, request, options)).toEqual({ statusCode: 302 });
      expect(server.requests.slice(requests)).toHaveLength(1);
    });

    it('a receiver that never answers is given up on at the timeout', async () => {
      await expect(postPublic(`https://files.test:${server.port}/slow`, request, { ...options, timeoutMs: 300 })).rejects.toMatchObject({ reason: 'timeout' });
    });

    it('plain http and private addresses only with allowPrivateTargets (local development)', async () => {
      await expect(postPublic(`http://files.test:${server.port}/hook`, request, options)).rejects.toMatchObject({ reason: 'not_https' });
      // files.test resolves to loopback: refused as such without the test-only exception, allowed with the setting.
      const loopback = { ...options, testOnlyPublicLoopbackPort: undefined };
      await expect(postPublic(`https://files.test:${server.port}/hook`, request, loopback)).rejects.toMatchObject({ reason: 'blocked_address' });
      expect(await postPublic(`https://files.test:${server.port}/hook`, request, { ...loopback, allowPrivateTargets: true })).toEqual({ statusCode: 204 });
    });
  });
});
