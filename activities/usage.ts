import type { Sequelize } from 'sequelize';
import { usagePeriodAt } from '../core/plans';
import { closeUsagePeriod } from '../db/repositories/usage';

export function createUsageActivities(db: Sequelize) {
  return {
    /** Writes the usage statements of the month that starts on `periodStart` (YYYY-MM-DD). */
    async closeUsagePeriod(periodStart: string): Promise<{ statements: number }> {
      const statements = await closeUsagePeriod(db, usagePeriodAt(new Date(`${periodStart}T00:00:00Z`)));
      return { statements };
    },
  };
}
