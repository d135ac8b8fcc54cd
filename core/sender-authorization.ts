import { domainOf, type Mailbox, parseMailboxes } from './addresses';
import { AppError } from './errors';

/**
 * The workspace's sending domain of that name if it is verified (with its default display name), or null.
 * A domain belongs to one workspace: another workspace's domain of the same name is not found.
 */
export type VerifiedDomainLookup = (workspaceId: string, domain: string) => Promise<{ defaultFromName: string | null } | null>;

export type SenderVerdict =
  | { ok: true; mailbox: Mailbox }
  | { ok: false; reason: 'invalid'; message: string }
  | { ok: false; reason: 'domain_not_verified'; domain: string; message: string };

/**
 * Sender authorization, the one check every way of sending email makes (POST /emails and its batch,
 * POST /messages, campaigns, journeys, inbox sends and drafts): the From is one mailbox whose domain is a
 * verified domain of the sending workspace. Every verified domain publishes our SPF include, so a sender
 * let through here would pass SPF and DMARC as another customer. The mailbox comes back with the domain's
 * default display name when it has none of its own. Delivery checks again (activities/dkim.ts): a domain
 * may lose its verification between acceptance and sending.
 */
export async function authorizeSender(verifiedDomain: VerifiedDomainLookup, workspaceId: string, from: string): Promise<SenderVerdict> {
  const parsed = parseMailboxes(from);
  if (!parsed.ok) return { ok: false, reason: 'invalid', message: parsed.error };
  if (parsed.mailboxes.length !== 1) return { ok: false, reason: 'invalid', message: 'Give exactly one sender' };
  const mailbox = parsed.mailboxes[0];
  const domainName = domainOf(mailbox.address);
  const domain = await verifiedDomain(workspaceId, domainName);
  if (!domain) return { ok: false, reason: 'domain_not_verified', domain: domainName, message: `The domain ${domainName} is not verified for this workspace` };
  return { ok: true, mailbox: mailbox.name || !domain.defaultFromName ? mailbox : { ...mailbox, name: domain.defaultFromName } };
}

/**
 * The verdict as the send routes answer it: 422 on the sender field when it does not parse, 403
 * `domain_not_verified` when its domain is not the workspace's verified domain.
 */
export async function authorizedSender(verifiedDomain: VerifiedDomainLookup, workspaceId: string, from: string, field: string): Promise<Mailbox> {
  const verdict = await authorizeSender(verifiedDomain, workspaceId, from);
  if (verdict.ok) return verdict.mailbox;
  if (verdict.reason === 'invalid') throw AppError.validation({ formErrors: [], fieldErrors: { [field]: [verdict.message] } });
  throw new AppError('domain_not_verified', verdict.message);
}
