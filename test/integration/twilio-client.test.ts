import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTwilioClient } from '../../providers/twilio/client';

describe('the twilio client under TWILIO_API_URL', () => {
  it('a base with a path prefix → every call goes to that host under the prefix, with basic auth', async () => {
    const seen: Array<{ url: string | undefined; authorization: string | undefined }> = [];
    const server = createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sid: 'AC00000000000000000000000000000000', status: 'active' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/twilio/`;
      const sid = 'AC00000000000000000000000000000000';
      await createTwilioClient(base, sid, 'token').api.v2010.accounts(sid).fetch();
      expect(seen).toEqual([{ url: `/twilio/2010-04-01/Accounts/${sid}.json`, authorization: `Basic ${Buffer.from(`${sid}:token`).toString('base64')}` }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
