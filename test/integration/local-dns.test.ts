import { type ChildProcess, spawn } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { resolve } from 'node:path';
import { loadConfig } from '../../core/config';
import { dkimRecordName, DMARC_VALUE, spfValue } from '../../core/dns-records';
import { findDomainByName } from '../../db/repositories/domains';
import { createSequelize } from '../../db/sequelize';
import { createTestWorkspace } from '../helpers/workspaces';
import { freePort } from '../helpers/free-port';

// `npm start`'s local DNS (scripts/local-dns.ts): what a domain's owner is asked to publish, served for real.
const config = loadConfig(process.env);
const db = createSequelize(config.DATABASE_URL);
let server: ChildProcess;
const resolver = new Resolver({ timeout: 1_000, tries: 1 });

beforeAll(async () => {
  const port = await freePort();
  resolver.setServers([`127.0.0.1:${port}`]);
  const root = resolve(__dirname, '../..');
  server = spawn(resolve(root, 'node_modules/.bin/tsx'), ['scripts/local-dns.ts'], {
    cwd: root,
    env: { ...process.env, LOCAL_DNS_PORT: String(port) },
    stdio: 'ignore',
    detached: true,
  });
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answered = await resolver.resolveTxt(config.PLATFORM_SPF_INCLUDE).then(() => true, () => false);
    if (answered) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error('the local DNS server did not answer');
});
afterAll(async () => {
  process.kill(-(server.pid as number), 'SIGTERM');
  await db.close();
});

describe('local DNS for development', () => {
  it("answers a local domain's SPF, DKIM and DMARC records and the platform's SPF include; nothing else", async () => {
    const { workspaceId, domain: name } = await createTestWorkspace(db, { domain: true });
    const domain = await findDomainByName(db, workspaceId, name);
    const txt = async (host: string) => (await resolver.resolveTxt(host)).map((strings) => strings.join(''));

    expect(await txt(name)).toEqual([spfValue(config.PLATFORM_SPF_INCLUDE)]);
    expect(await txt(dkimRecordName(domain?.dkimSelector ?? '', name))).toEqual([`v=DKIM1; k=rsa; p=${domain?.dkimPublicKey}`]);
    expect(await txt(`_dmarc.${name}`)).toEqual([DMARC_VALUE]);
    expect((await txt(config.PLATFORM_SPF_INCLUDE))[0]).toMatch(/^v=spf1 /);
    await expect(resolver.resolveTxt(`nobody-${Date.now()}.example.com`)).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
