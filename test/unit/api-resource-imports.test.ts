import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
// Its bin is not among the package's exports, so it is named by path (as npm's .bin link does).
const eslintBin = path.join(root, 'node_modules/eslint/bin/eslint.js');

/** Lints `code` as if it were the file at `file` (relative to the repository), with the project's config. */
function lint(file: string, code: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [eslintBin, '--stdin', '--stdin-filename', file], { cwd: root, input: code, encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('api resources never import each other (eslint.config.mjs, api-resources/no-sibling-import)', () => {
  it('a resource importing another resource\'s folder → lint fails naming both', () => {
    const result = lint('api/messages/probe.ts', "import { SendEmailBody } from '../emails/schemas';\nexport const probe = SendEmailBody;\n");
    expect(result.status).toBe(1);
    expect(result.output).toContain('api/messages/ may not import api/emails/');
  });

  it('a nested file reaching a resource two levels up → lint fails', () => {
    const result = lint('api/integrations/twilio/probe.ts', "export { linkStatsView } from '../../campaigns/routes';\n");
    expect(result.status).toBe(1);
    expect(result.output).toContain('api/integrations/ may not import api/campaigns/');
  });

  it('a resource importing api/http, services/ and its own folder → lint passes', () => {
    const code = [
      "import { MessageStatusSchema } from '../http/message-schemas';",
      "import { createEmailAcceptance } from '../../services/acceptance/email-acceptance';",
      "import { EmailParams } from './schemas';",
      'export const probe = [MessageStatusSchema, createEmailAcceptance, EmailParams];',
      '',
    ].join('\n');
    const result = lint('api/emails/probe.ts', code);
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
  });
});
