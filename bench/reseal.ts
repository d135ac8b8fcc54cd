import { createCipheriv, randomBytes, randomUUID } from 'node:crypto';
import { keyringOf, openSecret, type SealContext, sealSecret } from '../core/secrets';
import { createSequelize } from '../db/sequelize';
import { insertWorkspace } from '../db/repositories/workspaces';
import { resealSecrets } from '../services/secret-reseal';

/**
 * What sealed secrets with key ids cost (docs/security.md, "Self-hosting defaults, sealed secrets and
 * MASTER_KEY"): opening one, beside the first format's open (main before issue 29: raw key, no associated
 * data), and `secrets:reseal` over BENCH_ROWS DKIM keys of one workspace, beside the first version of the
 * command (a statement and a commit per row: 185 values/s on this machine). Run with `npm run bench -- reseal`.
 */
const ROWS = Number(process.env.BENCH_ROWS ?? 5_000);
const OPENS = 20_000;
const FIRST_VERSION_PER_SECOND = 185;

function microseconds(work: () => unknown): number {
  for (let i = 0; i < OPENS / 10; i += 1) work();
  const started = process.hrtime.bigint();
  for (let i = 0; i < OPENS; i += 1) work();
  return Number(process.hrtime.bigint() - started) / 1_000 / OPENS;
}

function sealFirstFormat(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

async function main(): Promise<void> {
  const [a, b] = [randomBytes(32), randomBytes(32)];
  const place: SealContext = { workspaceId: randomUUID(), column: 'twilio_integrations.auth_token' };
  const ring = keyringOf(a);
  const v1 = sealFirstFormat(a, 'a Twilio auth token');
  const v2 = sealSecret(ring, place, 'a Twilio auth token');
  console.log(`open, first format (baseline): ${microseconds(() => openSecret(ring, place, v1)).toFixed(1)} µs`);
  console.log(`open, key id and binding:      ${microseconds(() => openSecret(ring, place, v2)).toFixed(1)} µs`);
  const rotated = keyringOf(b, a);
  console.log(`open under a previous key:     ${microseconds(() => openSecret(rotated, place, v2)).toFixed(1)} µs`);
  console.log(`open, first format, 2nd key:   ${microseconds(() => openSecret(rotated, place, v1)).toFixed(1)} µs (the current key is tried first)`);

  const db = createSequelize(process.env.DATABASE_URL ?? '');
  const workspace = await insertWorkspace(db, { name: 'reseal bench', plan: 'pro' });
  try {
    const pem = `-----BEGIN PRIVATE KEY-----\n${randomBytes(1_200).toString('base64')}\n-----END PRIVATE KEY-----\n`;
    for (let i = 0; i < ROWS; i += 1_000) {
      const rows = Array.from({ length: Math.min(1_000, ROWS - i) }, (_, j) => {
        const name = `r${i + j}-${randomUUID().slice(0, 8)}.example.com`;
        return { id: randomUUID(), name, sealed: sealSecret(ring, { workspaceId: workspace.id, column: 'domains.dkim_private_key', row: name }, pem) };
      });
      await db.query(
        `INSERT INTO domains (id, workspace_id, name, region, dkim_selector, dkim_public_key, dkim_private_key_sealed)
         SELECT x.id, $1, x.name, 'us-east-1', 'bench', 'bench', x.sealed FROM json_to_recordset($2::json) AS x(id uuid, name text, sealed text)`,
        { bind: [workspace.id, JSON.stringify(rows)] },
      );
    }
    const started = Date.now();
    const first = await resealSecrets(db, keyringOf(b, a), { batchSize: 500 });
    const elapsed = Date.now() - started;
    const resealed = first.reduce((sum, report) => sum + report.resealed, 0);
    const again = Date.now();
    await resealSecrets(db, keyringOf(b, a), { batchSize: 500 });
    console.log(`re-seal: ${resealed} values in ${(elapsed / 1000).toFixed(1)} s, ${Math.round(resealed / (elapsed / 1000))}/s (first version: ${FIRST_VERSION_PER_SECOND}/s); a second run: ${Date.now() - again} ms`);
  } finally {
    await db.query('DELETE FROM workspaces WHERE id = $1', { bind: [workspace.id] });
    await db.close();
  }
}

void main();
