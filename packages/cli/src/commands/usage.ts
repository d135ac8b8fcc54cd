import type { Command } from 'commander';
import { unwrap } from '@messaging-backend/client';
import { contextFor } from '../context';

export function registerUsage(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command('usage')
    .description("The workspace's usage against its plan for the period")
    .option('--daily', 'also print each day of the period')
    .action(async (options: { daily?: boolean }, command: Command) => {
      const { client, output } = contextFor(command, env);
      const usage = unwrap(await client.GET('/api/v1/usage'));
      if (output.json) return output.data(usage);
      const { messages } = usage;
      const share = messages.limit ? Math.round((messages.used / messages.limit) * 100) : 0;
      const paintShare = share >= 100 ? output.color.red : share >= 80 ? output.color.yellow : output.color.green;
      output.fields([
        ['plan', usage.plan],
        ['period', `${usage.period}${usage.closed ? ' (closed)' : ''}  ${messages.periodStart.slice(0, 10)} to ${messages.periodEnd.slice(0, 10)} (exclusive)`],
        ['used', `${messages.used} of ${messages.limit} messages ${paintShare(`(${share}%)`)}`],
        ['remaining', messages.remaining],
        ['overage', `${messages.overage}${messages.overageBilling ? ' (billed)' : ' (refused: no overage billing)'}`],
        ['by channel', Object.entries(messages.byChannel).map(([channel, count]) => `${channel} ${count}`).join('  ')],
        ['by kind', Object.entries(messages.byKind).map(([kind, count]) => `${kind} ${count}`).join('  ')],
      ]);
      if (!options.daily) return;
      output.line();
      output.table(usage.daily, [
        { header: 'DATE', value: (day) => day.date },
        { header: 'MESSAGES', value: (day) => String(day.messages) },
        { header: 'EMAIL', value: (day) => String(day.byChannel.email) },
        { header: 'WHATSAPP', value: (day) => String(day.byChannel.whatsapp) },
        { header: 'TELEGRAM', value: (day) => String(day.byChannel.telegram) },
      ]);
    });
}
