import { z } from 'zod';
import { DOMAIN_NAME_PATTERN, displayName, EMAIL_ADDRESS } from '../http/formats';
import { DOMAIN_STATUSES } from '../../core/domain-status';
import { normaliseDomainName } from '../../core/domain-names';

// CR and LF in a display name would start a new header in every mail that uses it.
const DisplayName = displayName(200);

export const DomainName = z
  .string()
  .transform((value, ctx) => {
    // Cut absurd input short before IDN conversion; anything this long fails the 253 limit anyway.
    const result = normaliseDomainName(value.length > 1_000 ? value.slice(0, 1_000) : value);
    if (result.ok) return result.name;
    ctx.addIssue({ code: 'custom', message: result.problem });
    return z.NEVER;
  })
  .describe(
    'A registrable domain or a subdomain (at most 253 characters, 63 per label; no IP addresses), under a public suffix ' +
      '(ICANN\'s list, such as .com or .co.uk: more than a pattern can list). Unicode names are stored as lower-case A-labels (punycode).',
  )
  .meta({ pattern: DOMAIN_NAME_PATTERN });

export const CreateDomainBody = z
  .object({
    name: DomainName,
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, 'must be an AWS region such as us-east-1')
      .optional()
      .describe('Where the provider sends from (the SES region); defaults to the deployment\'s AWS_REGION'),
    defaultFromName: DisplayName.optional().describe('Display name used when a send gives a bare from address'),
  })
  .meta({ id: 'CreateDomain' });

export const UpdateDomainBody = z
  .object({
    defaultFromName: DisplayName.nullable().optional().describe('null clears it'),
    defaultFromAddress: z.string().max(320).meta({ pattern: EMAIL_ADDRESS }).nullable().optional().describe('An address on this domain; null clears it'),
  })
  .meta({ id: 'UpdateDomain' });

export const DomainParams = z.object({ id: z.uuid() });

const RecordKind = z.enum(['spf', 'dkim', 'dmarc', 'mx', 'return_path_mx', 'return_path_spf']);

export const DnsRecordSchema = z
  .object({
    record: RecordKind.describe('What the record is for; return_path_mx and return_path_spf (the bounce subdomain of a domain without inbound) are optional: they never fail verification, and once they check, SMTP mail carries a VERP return path there'),
    type: z.enum(['TXT', 'MX']),
    name: z.string().describe('Fully qualified name to publish the record at'),
    value: z.string().describe('TXT text, or the MX host'),
    priority: z.number().int().optional().describe('MX only'),
    ttl: z.number().int().describe('Suggested TTL in seconds'),
    status: z
      .enum(['pending', 'verified', 'failed', 'unknown'])
      .describe('From the last check: pending (not checked yet), verified, failed, unknown (DNS did not answer)'),
    detail: z.string().optional().describe('Why the record failed, and what to publish'),
  })
  .meta({ id: 'DnsRecord' });

export const DomainSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(DOMAIN_STATUSES),
    region: z.string(),
    inboundEnabled: z.boolean(),
    defaultFromName: z.string().nullable(),
    defaultFromAddress: z.string().nullable(),
    detail: z.string().nullable().describe('What the last check found wrong; null when it passed or has not run'),
    dnsRecords: z.array(DnsRecordSchema),
    zoneFile: z.string().describe('The same records as a BIND zone-file snippet'),
    lastCheckedAt: z.iso.datetime().nullable(),
    verifiedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Domain' });

export const DomainListSchema = z.object({ domains: z.array(DomainSchema) }).meta({ id: 'DomainList' });

export const DomainCreatedSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(DOMAIN_STATUSES),
    dnsRecords: z.array(DnsRecordSchema).describe('The records to publish'),
    zoneFile: z.string().describe('The same records as a BIND zone-file snippet'),
  })
  .meta({ id: 'DomainCreated' });

export const DomainVerifySchema = z
  .object({
    id: z.uuid(),
    status: z.enum(DOMAIN_STATUSES),
    detail: z.string().optional().describe('Which records failed and why; absent when the domain is verified'),
    dnsRecords: z.array(DnsRecordSchema),
  })
  .meta({ id: 'DomainVerify' });

export const DomainInboundSchema = z
  .object({
    id: z.uuid(),
    inboundEnabled: z.boolean(),
    mx: z.string().optional().describe('The host to publish as the domain\'s MX record (priority 10); present when enabled'),
  })
  .meta({ id: 'DomainInbound' });

export type CreateDomainInput = z.infer<typeof CreateDomainBody>;
export type UpdateDomainInput = z.infer<typeof UpdateDomainBody>;
export type DomainView = z.infer<typeof DomainSchema>;
export type DnsRecordView = z.infer<typeof DnsRecordSchema>;

const DomainUser = z.object({ id: z.uuid(), name: z.string(), status: z.string() });

export const DomainInUseSchema = z
  .object({
    error: z.literal('conflict'),
    message: z.string(),
    usedBy: z.object({
      campaigns: z.array(DomainUser).describe('Scheduled, sending or paused campaigns whose fromAddress is on the domain'),
      journeys: z.array(DomainUser).describe('Active or paused journeys with an email step sending from it (its from, or the default sender it gives)'),
      inboxes: z.array(z.object({ id: z.uuid(), address: z.string(), status: z.string() })).describe('Every inbox on the domain, disabled ones too'),
    }),
  })
  .meta({ id: 'DomainInUse' });
