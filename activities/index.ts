import type { Sequelize } from 'sequelize';
import { createUsageActivities } from './usage';

export interface ActivityDeps {
  db: Sequelize;
}

/** Every activity, built from its dependencies so tests can pass their own. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createUsageActivities(deps.db),
  };
}

export type Activities = ReturnType<typeof createActivities>;
