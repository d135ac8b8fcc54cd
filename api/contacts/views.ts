import type { z } from 'zod';
import type { IdentityRecord } from '../../db/repositories/contact-identities';
import type { ContactRecord } from '../../db/repositories/contacts';
import type { SuppressionRecord } from '../../db/repositories/suppressions';
import type { UpsertOutcome } from '../../services/contact-upsert';
import type { ContactDetailSchema, ContactIdentitySchema, ContactSchema, ContactUpsertedSchema } from './schemas';

export function identityView(identity: IdentityRecord): z.infer<typeof ContactIdentitySchema> {
  return {
    channel: identity.channel,
    address: identity.address,
    consent: identity.consent,
    verified: identity.verified,
    isPrimary: identity.isPrimary,
  };
}

export function contactView(contact: ContactRecord, identities: readonly IdentityRecord[]): z.infer<typeof ContactSchema> {
  return {
    id: contact.id,
    attributes: contact.attributes,
    createdAt: contact.createdAt.toISOString(),
    identities: identities.filter((identity) => identity.contactId === contact.id).map(identityView),
  };
}

export function contactDetailView(detail: {
  contact: ContactRecord;
  identities: IdentityRecord[];
  tags: Array<{ id: string; name: string }>;
  lists: Array<{ id: string; name: string }>;
  /** Keyed `<channel>:<address>` (suppressionsOf). */
  suppressions: ReadonlyMap<string, SuppressionRecord>;
}): z.infer<typeof ContactDetailSchema> {
  return {
    id: detail.contact.id,
    attributes: detail.contact.attributes,
    createdAt: detail.contact.createdAt.toISOString(),
    identities: detail.identities.map((identity) => {
      const suppression = detail.suppressions.get(`${identity.channel}:${identity.address}`);
      return {
        ...identityView(identity),
        ...(suppression && {
          suppression: { reason: suppression.reason, detail: suppression.detail, messageId: suppression.messageId, createdAt: suppression.createdAt.toISOString() },
        }),
      };
    }),
    tags: detail.tags,
    lists: detail.lists,
  };
}

export function contactUpsertedView(outcome: UpsertOutcome): z.infer<typeof ContactUpsertedSchema> {
  return {
    id: outcome.id,
    created: outcome.created,
    identitiesAdded: outcome.identitiesAdded,
    ...(outcome.warnings.length ? { warnings: outcome.warnings } : {}),
  };
}
