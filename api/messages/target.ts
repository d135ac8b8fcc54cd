import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import type { Channel } from '../../core/identities';
import { pickIdentity } from '../../core/message-channels';
import { identitiesOf } from '../../db/repositories/contact-identities';
import { findContact } from '../../db/repositories/contacts';
import type { SendMessageInput } from './schemas';

/** Where a message goes: its channel and its address on that channel (as given; the channel checks it). */
export interface Target {
  channel: Channel;
  to: string;
  contactId: string | null;
}

function fieldError(field: string, message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });
}

/**
 * The channel and address of a send. Both given: as given (a contactId is only recorded). Otherwise the
 * contact's primary verified identity with consent fills in what is missing: on the given channel, or the
 * first channel in the service's order that has one (core/message-channels.ts). A contact of another
 * workspace is answered like a missing one.
 */
export async function resolveTarget(db: Sequelize, workspaceId: string, input: SendMessageInput): Promise<Target> {
  if (!input.contactId) {
    if (!input.channel) throw fieldError('channel', 'Required unless contactId is given');
    if (!input.to) throw fieldError('to', 'Required unless contactId is given');
    return { channel: input.channel, to: input.to, contactId: null };
  }
  const contact = await findContact(db, workspaceId, input.contactId);
  if (!contact) throw AppError.notFound('Contact');
  if (input.channel && input.to) return { channel: input.channel, to: input.to, contactId: contact.id };
  if (input.to) throw fieldError('channel', 'Required when to is given: to is read by its channel');
  const identity = pickIdentity(await identitiesOf(db, workspaceId, [contact.id]), input.channel);
  if (!identity) {
    const where = input.channel ? ` on ${input.channel}` : '';
    throw fieldError('contactId', `The contact has no primary verified identity with consent (opted_in)${where}`);
  }
  return { channel: identity.channel, to: identity.address, contactId: contact.id };
}
