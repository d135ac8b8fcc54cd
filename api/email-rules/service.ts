import type { Sequelize } from 'sequelize';
import { normaliseDomainName } from '../../core/domain-names';
import { AppError } from '../../core/errors';
import { normaliseEmail } from '../../core/identities';
import { deleteEmailRule, type EmailRuleRecord, insertEmailRule, listEmailRuleRecords, MAX_EMAIL_RULES } from '../../db/repositories/email-rules';
import type { CreateEmailRuleInput } from './schemas';

/**
 * The value as the listener compares it (core/inbox/rules.ts): an address normalised as a contact's email
 * identity, or a domain name in its lower-case ASCII form. Anything else can never match, so it is refused.
 */
function ruleValue(input: CreateEmailRuleInput): string {
  if (input.matchType === 'address') {
    const address = normaliseEmail(input.value);
    if (!address.ok) throw AppError.validation({ formErrors: [], fieldErrors: { value: [address.reason] } });
    return address.address;
  }
  const domain = normaliseDomainName(input.value.replace(/^@/, ''));
  if (!domain.ok) throw AppError.validation({ formErrors: [], fieldErrors: { value: [domain.problem] } });
  return domain.name;
}

export function createEmailRuleService(db: Sequelize) {
  return {
    list: (workspaceId: string) => listEmailRuleRecords(db, workspaceId),

    /** The same rule twice is a conflict naming the rule there (as a domain added twice is). */
    async create(workspaceId: string, input: CreateEmailRuleInput): Promise<EmailRuleRecord> {
      const value = ruleValue(input);
      const claim = await insertEmailRule(db, workspaceId, { action: input.action, matchType: input.matchType, value, note: input.note ?? null });
      if (claim === 'limit') throw new AppError('conflict', `A workspace has at most ${MAX_EMAIL_RULES} email rules`);
      if ('taken' in claim) throw new AppError('conflict', `This workspace already has the rule ${input.action} ${input.matchType} ${value}`, { id: claim.taken });
      return claim.created;
    },

    async remove(workspaceId: string, id: string): Promise<EmailRuleRecord> {
      const rule = await deleteEmailRule(db, workspaceId, id);
      if (!rule) throw AppError.notFound('Email rule');
      return rule;
    },
  };
}

export type EmailRuleService = ReturnType<typeof createEmailRuleService>;
