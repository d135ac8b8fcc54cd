import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SCHEMA_PATH = join(__dirname, '..', '..', 'packages', 'client', 'src', 'schema.ts');
const GENERATOR = join(__dirname, '..', '..', 'packages', 'client', 'scripts', 'generate-schema.ts');

// The typed client is generated from the document the API serves; a route or schema changed without
// regenerating would ship a client whose types lie. The generator runs as `npm run client:generate` runs it,
// in its own process: openapi-typescript loads ESM-only packages jest's module system cannot, and the app it
// builds (without opening any connection) is better not left in the test worker's heap.
describe('the typed client schema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'client-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the committed packages/client/src/schema.ts is exactly what the served document generates', async () => {
    const out = join(dir, 'schema.ts');
    await promisify(execFile)(process.execPath, [require.resolve('tsx/cli'), GENERATOR, out], { env: { ...process.env, LOG_LEVEL: 'silent' } });
    const generated = readFileSync(out, 'utf8');
    const committed = readFileSync(SCHEMA_PATH, 'utf8');
    if (generated !== committed) {
      const at = [...generated].findIndex((char, i) => char !== committed[i]);
      const line = generated.slice(0, at === -1 ? generated.length : at).split('\n').length;
      throw new Error(`packages/client/src/schema.ts is out of date with the API's OpenAPI document (first difference at line ${line}). Run \`npm run client:generate\` and commit the result.`);
    }
  });
});
