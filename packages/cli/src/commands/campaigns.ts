import type { Command } from 'commander';
import { type components, unwrap } from '@messaging-backend/client';
import { confirm } from '../confirm';
import { contextFor } from '../context';
import { CliError } from '../errors';
import { type Output, paintStatus } from '../output';

type Estimate = components['schemas']['CampaignEstimate']['estimate'];

interface SendOptions {
  yes?: boolean;
  at?: string;
}

export function registerCampaigns(program: Command, env: NodeJS.ProcessEnv): void {
  const campaigns = program.command('campaigns').description('Broadcast campaigns');

  campaigns
    .command('estimate')
    .description('How many people a send would reach now, with a confirmation token (valid 10 minutes)')
    .argument('<id>', 'the campaign id')
    .action(async (id: string, _options: unknown, command: Command) => {
      const { client, output } = contextFor(command, env);
      const result = unwrap(await client.POST('/api/v1/campaigns/{id}/estimate', { params: { path: { id } } }));
      if (output.json) return output.data(result);
      printEstimate(output, result.estimate);
      output.fields([['confirmation token', `${result.confirmationToken} ${output.color.dim('(valid 10 minutes; an edit voids it)')}`]]);
    });

  campaigns
    .command('send')
    .description('Send now (or schedule with --at) after confirming the recipient count')
    .argument('<id>', 'the campaign id')
    .option('-y, --yes', 'send without asking (scripts, CI)')
    .option('--at <date-time>', 'schedule it (ISO 8601); the estimate confirms it too')
    .action(async (id: string, options: SendOptions, command: Command) => {
      const { client, output, interactive } = contextFor(command, env);
      const scheduledAt = options.at && parseDateTime(options.at);
      // The token confirms this campaign as it is now: estimate first, so the count asked about is the count sent to.
      const { estimate, confirmationToken } = unwrap(await client.POST('/api/v1/campaigns/{id}/estimate', { params: { path: { id } } }));
      if (!options.yes) {
        if (!interactive) throw new CliError(`refusing to send to ${estimate.recipients} recipients without confirmation: run it in a terminal to answer the prompt, or pass --yes`, 1, 'confirmation_required');
        if (!output.json) printEstimate(output, estimate);
        const when = scheduledAt ? ` at ${scheduledAt}` : '';
        if (!(await confirm(`Send to ${estimate.recipients} recipients${when}?`))) {
          throw new CliError('not confirmed: nothing was sent', 1, 'not_confirmed');
        }
      }
      const sent = unwrap(
        await client.POST('/api/v1/campaigns/{id}/send', { params: { path: { id } }, body: { confirmationToken, ...(scheduledAt && { scheduledAt }) } }),
      );
      if (output.json) return output.data(sent);
      output.fields([
        ['id', sent.id],
        ['status', paintStatus(output.color, sent.status)],
        ['recipients', sent.recipients],
        ...(sent.scheduledAt ? [['scheduled at', sent.scheduledAt] as [string, string]] : []),
      ]);
    });
}

function printEstimate(output: Output, estimate: Estimate): void {
  output.fields([
    ['recipients', output.color.bold(String(estimate.recipients))],
    ['list members', estimate.listMembers],
    ['held out', estimate.heldOut],
    ['excluded', `${estimate.excluded}${estimate.noAddress ? ` (${estimate.noAddress} with no usable address)` : ''}`],
    ['by channel', Object.entries(estimate.byChannel).map(([channel, count]) => `${channel} ${count}`).join('  ')],
    ['sample', estimate.sample.join(', ') || '-'],
  ]);
}

function parseDateTime(value: string): string {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw new CliError(`--at takes an ISO 8601 date-time, not "${value}"`);
  return at.toISOString();
}
