import { defineSearchAttributeKey, type SearchAttributePair, SearchAttributeType } from '@temporalio/common';

/**
 * The search attributes every workflow carries, so operators find any workflow in the Temporal UI
 * (`WorkspaceId = "…"`, `MessageId = "…"`). `npm start` and the test stack register them on the dev server
 * (scripts/temporal-cli.ts); a cluster registers them once (docs/delivery.md).
 */
export const SEARCH_ATTRIBUTE = {
  WorkspaceId: defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD),
  MessageId: defineSearchAttributeKey('MessageId', SearchAttributeType.KEYWORD),
  CampaignId: defineSearchAttributeKey('CampaignId', SearchAttributeType.KEYWORD),
  AutomationId: defineSearchAttributeKey('AutomationId', SearchAttributeType.KEYWORD),
  EnrollmentId: defineSearchAttributeKey('EnrollmentId', SearchAttributeType.KEYWORD),
  ContactId: defineSearchAttributeKey('ContactId', SearchAttributeType.KEYWORD),
  Channel: defineSearchAttributeKey('Channel', SearchAttributeType.KEYWORD),
  Kind: defineSearchAttributeKey('Kind', SearchAttributeType.KEYWORD),
} as const;

/**
 * The messages a batch workflow carries, so `MessageIds = "<id>"` finds the batch that carried a message
 * whose workflow is not its own `send:<id>` (docs/delivery.md). A keyword list: Temporal matches any element.
 */
export const MESSAGE_IDS = defineSearchAttributeKey('MessageIds', SearchAttributeType.KEYWORD_LIST);

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTE;

/** The pairs for the values given; absent and null values are left out (Temporal has no null keyword). */
export function searchAttributes(
  values: Partial<Record<SearchAttributeName, string | null | undefined>>,
  messageIds?: readonly string[],
): SearchAttributePair[] {
  const keywords = (Object.entries(values) as Array<[SearchAttributeName, string | null | undefined]>).flatMap(([name, value]) =>
    value ? [{ key: SEARCH_ATTRIBUTE[name], value }] : [],
  );
  return messageIds?.length ? [...keywords, { key: MESSAGE_IDS, value: [...messageIds] }] : keywords;
}
