import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Every send asks which of its recipients are suppressed. Through the primary key (workspace first), a
 * workspace the statistics have not seen yet (a new sender, or one that just imported a list) is estimated
 * at one row, and the planner then reads all its suppressions and filters them: 23 ms per lookup for a
 * workspace with 100,000. The lookup uses this index instead, address first (see SUPPRESSED_AMONG).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('CREATE INDEX suppressions_address_idx ON suppressions (address, channel, workspace_id)');
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP INDEX suppressions_address_idx');
};
