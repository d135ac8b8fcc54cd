import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { addressCandidates, type Channel, normaliseAddress } from '../../core/identities';
import type { SuppressionReason } from '../../core/suppressions';
import { addSuppression, deleteSuppressions, listSuppressions } from '../../db/repositories/suppressions';

export function createSuppressionService(db: Sequelize) {
  return {
    list: (workspaceId: string, filters: { channel?: Channel; reason?: SuppressionReason; limit: number; offset: number }) =>
      listSuppressions(db, workspaceId, filters),

    async add(workspaceId: string, input: { channel: Channel; address: string; reason: SuppressionReason }) {
      const normalised = normaliseAddress(input.channel, input.address);
      if (!normalised.ok) throw AppError.validation({ formErrors: [], fieldErrors: { address: [normalised.reason] } });
      return addSuppression(db, workspaceId, { channel: input.channel, address: normalised.address, reason: input.reason });
    },

    /**
     * The path names an address without its channel; address forms are disjoint (an @, a leading +, a
     * bare integer), so the suppression is lifted on each channel the address is valid on.
     */
    async remove(workspaceId: string, address: string) {
      const removed = await deleteSuppressions(db, workspaceId, addressCandidates(address));
      if (removed.length === 0) throw AppError.notFound('Suppression');
      return { address: removed[0].address, channels: removed.map((row) => row.channel) };
    },
  };
}

export type SuppressionService = ReturnType<typeof createSuppressionService>;
