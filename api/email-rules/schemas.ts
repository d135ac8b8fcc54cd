import { z } from 'zod';
import { DOMAIN_NAME_PATTERN, EMAIL_ADDRESS } from '../http/formats';

export const CreateEmailRuleBody = z
  .object({
    action: z.enum(['allow', 'block']).describe('block refuses a matching sender; once any allow rule exists, only matching senders are accepted'),
    matchType: z.enum(['address', 'domain']).describe('address: the exact sender address; domain: the domain and its subdomains'),
    value: z.string().trim().min(1).max(254).describe('An address (matchType address) or a domain name without @ (matchType domain); stored lower-case'),
    note: z.string().trim().max(500).nullable().optional(),
  })
  .meta({
    id: 'CreateEmailRule',
    // The value's form by matchType, as the route checks it (api/email-rules/service.ts); a domain must also be
    // under an ICANN public suffix, which no pattern can say.
    allOf: [
      { if: { required: ['matchType'], properties: { matchType: { const: 'address' } } }, then: { properties: { value: { pattern: EMAIL_ADDRESS } } } },
      { if: { required: ['matchType'], properties: { matchType: { const: 'domain' } } }, then: { properties: { value: { pattern: DOMAIN_NAME_PATTERN } } } },
    ],
  });

export type CreateEmailRuleInput = z.infer<typeof CreateEmailRuleBody>;

export const EmailRuleParams = z.object({ id: z.uuid() });

export const EmailRuleSchema = z
  .object({
    id: z.uuid(),
    action: z.enum(['allow', 'block']),
    matchType: z.enum(['address', 'domain']),
    value: z.string(),
    note: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'EmailRule' });

export type EmailRuleView = z.infer<typeof EmailRuleSchema>;

export const EmailRuleListSchema = z.object({ rules: z.array(EmailRuleSchema) }).meta({ id: 'EmailRuleList' });
export const EmailRuleEnvelopeSchema = z.object({ rule: EmailRuleSchema }).meta({ id: 'EmailRuleEnvelope' });
