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

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTE;

/** The pairs for the values given; absent and null values are left out (Temporal has no null keyword). */
export function searchAttributes(values: Partial<Record<SearchAttributeName, string | null | undefined>>): SearchAttributePair[] {
  return (Object.entries(values) as Array<[SearchAttributeName, string | null | undefined]>).flatMap(([name, value]) =>
    value ? [{ key: SEARCH_ATTRIBUTE[name], value }] : [],
  );
}
