/**
 * Why an address is on a workspace's suppression list. Delivery events add the first three (decisions:
 * hard bounces, complaints and unsubscribes), `manual` comes from POST /suppressions, and `erased` from
 * DELETE /contacts/:id, which keeps the address so that an import cannot bring the person back by accident.
 */
export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'unsubscribed', 'manual', 'erased'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** Reasons a client may declare; `erased` is only ever the result of erasing a contact. */
export const DECLARABLE_REASONS = ['manual', 'unsubscribed', 'hard_bounce', 'complaint'] as const;
