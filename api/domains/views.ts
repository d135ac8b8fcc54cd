import type { z } from 'zod';
import { domainRecords, type RecordSettings, zoneFile } from '../../core/dns-records';
import type { DomainRecord } from '../../db/repositories/domains';
import type { DnsRecordView, DomainCreatedSchema, DomainInboundSchema, DomainVerifySchema, DomainView } from './schemas';

/** The records to publish, each with what the last check found (Resend and Postmark show the same). */
export function recordViews(domain: DomainRecord, settings: RecordSettings): DnsRecordView[] {
  const checks = new Map(domain.recordChecks.map((check) => [check.record, check]));
  return domainRecords(domain, settings).map((record) => {
    const check = checks.get(record.record);
    return { ...record, status: check?.status ?? 'pending', ...(check?.detail && { detail: check.detail }) };
  });
}

export function domainView(domain: DomainRecord, settings: RecordSettings): DomainView {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    region: domain.region,
    inboundEnabled: domain.inboundEnabled,
    defaultFromName: domain.defaultFromName,
    defaultFromAddress: domain.defaultFromAddress,
    detail: domain.detail,
    dnsRecords: recordViews(domain, settings),
    zoneFile: zoneFile(domain.name, domainRecords(domain, settings)),
    lastCheckedAt: domain.lastCheckedAt?.toISOString() ?? null,
    verifiedAt: domain.verifiedAt?.toISOString() ?? null,
    createdAt: domain.createdAt.toISOString(),
  };
}

export function domainCreatedView(domain: DomainRecord, settings: RecordSettings): z.infer<typeof DomainCreatedSchema> {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    dnsRecords: recordViews(domain, settings),
    zoneFile: zoneFile(domain.name, domainRecords(domain, settings)),
  };
}

export function domainVerifyView(domain: DomainRecord, settings: RecordSettings): z.infer<typeof DomainVerifySchema> {
  return {
    id: domain.id,
    status: domain.status,
    ...(domain.status !== 'verified' && domain.detail && { detail: domain.detail }),
    dnsRecords: recordViews(domain, settings),
  };
}

export function domainInboundView(domain: DomainRecord, settings: RecordSettings): z.infer<typeof DomainInboundSchema> {
  return domain.inboundEnabled
    ? { id: domain.id, inboundEnabled: true, mx: settings.inboundMxHost }
    : { id: domain.id, inboundEnabled: false };
}
