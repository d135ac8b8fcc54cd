import { Command } from 'commander';
import { CLI_VERSION, DEFAULT_BASE_URL } from './context';
import { registerCampaigns } from './commands/campaigns';
import { registerDomains } from './commands/domains';
import { registerMessages } from './commands/messages';
import { registerSend } from './commands/send';
import { registerUsage } from './commands/usage';
import { registerWebhooks } from './commands/webhooks';

/** Every command, with the options they all take; the environment is passed in so a test can build its own. */
export function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('messaging')
    .description('The Messaging API from a terminal')
    .version(CLI_VERSION)
    .option('--json', 'machine output: one JSON document per result (NDJSON when following); no colours')
    .option('--api-key <key>', 'workspace API key (default: $MESSAGING_API_KEY)')
    .option('--base-url <url>', `where the service runs (default: $MESSAGING_BASE_URL or ${DEFAULT_BASE_URL})`)
    .showHelpAfterError();
  registerSend(program, env);
  registerMessages(program, env);
  registerDomains(program, env);
  registerUsage(program, env);
  registerCampaigns(program, env);
  registerWebhooks(program, env);
  return program;
}
