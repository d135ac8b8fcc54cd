import type { Sequelize } from 'sequelize';
import { findDomainByName } from '../../db/repositories/domains';
import { findTemplateByIdOrName } from '../../db/repositories/templates';
import type { AttachmentSources } from '../attachment-sources';
import type { VerifiedDomainLookup } from '../../core/sender-authorization';
import type { SendChecks } from './email-draft';
import { LookupCache } from './lookup-cache';

/**
 * The verified sending domains of every workspace, remembered for `ttlMs`: every send checks its domain,
 * so a change of status reaches sends within that time (DOMAIN_CACHE_TTL_MS) rather than each send
 * reading the database.
 */
export function verifiedDomainCache(db: Sequelize, ttlMs: number): VerifiedDomainLookup {
  const domains = new LookupCache(async (workspaceAndName) => {
    const [workspaceId, name] = workspaceAndName.split('/');
    const domain = await findDomainByName(db, workspaceId, name);
    return domain?.status === 'verified' ? { defaultFromName: domain.defaultFromName } : null;
  }, ttlMs);
  return (workspaceId, name) => domains.get(`${workspaceId}/${name}`);
}

/** The checks of every acceptance that read other areas' data: the sender's domain, the template, the attachments. */
export function createSendChecks(deps: { db: Sequelize; verifiedDomain: VerifiedDomainLookup; sources: AttachmentSources }): SendChecks {
  const { db, sources } = deps;
  return {
    verifiedDomain: deps.verifiedDomain,
    templateExists: async (workspaceId, idOrName) => {
      const template = await findTemplateByIdOrName(db, workspaceId, idOrName);
      return template ? { id: template.id, versionId: template.versionId, hasSubject: Boolean(template.subject?.trim()), variables: template.variables } : null;
    },
    prepareAttachments: (workspaceId, items) => sources.accept(workspaceId, items),
  };
}
