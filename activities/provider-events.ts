import { log } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { matchParkedEvents, type Suppress } from '../db/repositories/provider-events';
import { suppressAddresses } from '../db/repositories/suppressions';

export interface MatchParkedInput {
  /** Most parked events recorded in one call; the rest wait for the next. */
  limit: number;
}

export interface MatchParkedResult {
  /** Parked events now recorded on their message. */
  recorded: number;
  /** Parked events dropped after waiting 7 days for a message with their provider id. */
  expired: number;
}

/** Provider events are email's so far (SES): their addresses are email suppressions. */
export function emailSuppress(db: Sequelize): Suppress {
  return (workspaceId, addresses, reason, transaction) => suppressAddresses(db, workspaceId, 'email', addresses, reason, transaction).then(() => undefined);
}

export function createProviderEventActivities(db: Sequelize) {
  const suppress = emailSuppress(db);
  return {
    /**
     * The periodic sweep of provider notifications parked because no message had their provider id yet
     * (db/repositories/provider-events.ts): records those whose message now has it, drops week-old ones.
     */
    async matchParkedProviderEvents(input: MatchParkedInput): Promise<MatchParkedResult> {
      const result = await matchParkedEvents(db, suppress, { limit: input.limit });
      if (result.recorded > 0) log.info('parked provider events recorded on their messages', { recorded: result.recorded });
      // A message never recorded its provider id: a send the provider accepted that we lost track of.
      if (result.expired > 0) log.warn('parked provider events expired without a message', { expired: result.expired });
      return result;
    },
  };
}

export type ProviderEventActivities = ReturnType<typeof createProviderEventActivities>;
