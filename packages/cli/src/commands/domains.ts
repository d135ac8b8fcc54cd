import type { Command } from 'commander';
import { type components, type MessagingClient, unwrap } from '@messaging-backend/client';
import { contextFor } from '../context';
import { CliError, EXIT } from '../errors';
import { paintStatus } from '../output';

type DnsRecord = components['schemas']['DnsRecord'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The return-path records never fail verification (the API says so on DnsRecord.record). */
const OPTIONAL = new Set<DnsRecord['record']>(['return_path_mx', 'return_path_spf']);

export function registerDomains(program: Command, env: NodeJS.ProcessEnv): void {
  const domains = program.command('domains').description('Sending domains');

  domains
    .command('verify')
    .description('Check SPF, DKIM and DMARC now and print the DNS records still missing (exit 0 verified, 2 not yet)')
    .argument('<name-or-id>', 'the domain name (mail.example.com) or its id')
    .action(async (nameOrId: string, _options: unknown, command: Command) => {
      const { client, output } = contextFor(command, env);
      const id = UUID.test(nameOrId) ? nameOrId : await domainIdByName(client, nameOrId);
      const verdict = unwrap(await client.POST('/api/v1/domains/{id}/verify', { params: { path: { id } } }));
      const missing = verdict.dnsRecords.filter((record) => record.status !== 'verified');
      if (verdict.status !== 'verified') process.exitCode = EXIT.negative;
      if (output.json) return output.data({ ...verdict, missing });

      output.line(`${nameOrId}  ${output.color.bold(paintStatus(output.color, verdict.status))}`);
      if (verdict.detail) output.line(output.color.dim(verdict.detail));
      if (!missing.length) return;
      output.line();
      output.line(verdict.status === 'verified' ? 'Optional records not found yet:' : 'Publish these records (missing or wrong):');
      output.table(missing, [
        { header: 'RECORD', value: (record) => (OPTIONAL.has(record.record) ? `${record.record} (optional)` : record.record) },
        { header: 'STATUS', value: (record) => record.status, paint: (cell, record) => paintStatus(output.color, record.status === 'verified' ? 'verified' : 'failed', cell) },
        { header: 'TYPE', value: (record) => record.type },
        { header: 'NAME', value: (record) => record.name },
        { header: 'VALUE', value: (record) => (record.priority !== undefined ? `${record.priority} ${record.value}` : record.value) },
      ]);
    });
}

/** Names are unique within a workspace; the list is small (a workspace has a handful of domains). */
async function domainIdByName(client: MessagingClient, name: string): Promise<string> {
  const { domains } = unwrap(await client.GET('/api/v1/domains'));
  const wanted = name.trim().toLowerCase().replace(/\.$/, '');
  const domain = domains.find((candidate) => candidate.name.toLowerCase() === wanted);
  if (!domain) throw new CliError(`no domain named ${name} in this workspace (domains: ${domains.map((d) => d.name).join(', ') || 'none'})`, EXIT.error, 'not_found');
  return domain.id;
}
