import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { periodKey, PLANS, usagePeriodAt } from '../../core/plans';
import { acceptMessages } from '../../db/repositories/message-acceptance';
import type { MessageKind, NewMessage } from '../../db/repositories/messages';

/**
 * Accepts `count` messages of a kind straight into the outbox, as campaigns and journeys will: what the
 * delivery engine sees of a bulk send before those features exist. Returns their ids in order.
 */
export async function queueMessages(
  db: Sequelize,
  workspaceId: string,
  options: { kind: MessageKind; count: number; from: string; campaignId?: string; toPrefix?: string },
): Promise<string[]> {
  const period = usagePeriodAt(new Date());
  const messages: NewMessage[] = Array.from({ length: options.count }, (_, i) => ({
    id: randomUUID(),
    kind: options.kind,
    channel: 'email',
    idempotencyKey: `queued-${randomUUID()}`,
    requestHash: 'test',
    fromAddress: options.from,
    to: [`${options.toPrefix ?? options.kind}-${i}@example.org`],
    cc: [],
    bcc: [],
    subject: `${options.kind} ${i}`,
    content: { text: 'Hello' },
    templateId: null,
    campaignId: options.campaignId ?? null,
    quotaUnits: 1,
    quotaPeriod: periodKey(period),
    droppedRecipients: [],
  }));
  for (let i = 0; i < messages.length; i += 1_000) {
    await acceptMessages(db, workspaceId, { plan: PLANS.pro, period }, messages.slice(i, i + 1_000));
  }
  return messages.map((message) => message.id);
}
