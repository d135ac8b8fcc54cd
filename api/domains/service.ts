import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { domainOf, normaliseAddress } from '../../core/addresses';
import { type Config, configKeyring } from '../../core/config';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import type { RecordSettings } from '../../core/dns-records';
import { AppError } from '../../core/errors';
import { type Keyring, sealSecret } from '../../core/secrets';
import {
  type DomainRecord,
  findDomain,
  insertDomain,
  isVerifiedElsewhere,
  listDomains,
  setInboundEnabled,
  updateDomainDefaults,
} from '../../db/repositories/domains';
import { deleteUnusedDomain } from '../../db/repositories/domain-deletion';
import { createSesClients } from '../../providers/ses/clients';
import { createSesDomainIdentities } from '../../providers/ses/domain-identity';
import type { CreateDomainInput, UpdateDomainInput } from './schemas';
import { createDomainVerification, type DomainVerification } from './verification';

export interface DomainServiceDeps {
  db: Sequelize;
  settings: RecordSettings;
  keyring: Keyring;
  defaultRegion: string;
  verification: DomainVerification;
  /**
   * Removes a deleted domain from the email provider, when the provider holds it (SES: the identity with
   * our DKIM key). Absent when the provider keeps nothing per domain (the SMTP relay).
   */
  forgetAtProvider?: (domain: { name: string; region: string }) => Promise<void>;
  logger?: Logger;
}

export function createDomainService({ db, settings, keyring, defaultRegion, verification, forgetAtProvider, logger }: DomainServiceDeps) {
  const get = async (workspaceId: string, domainId: string): Promise<DomainRecord> => {
    const domain = await findDomain(db, workspaceId, domainId);
    if (!domain) throw AppError.notFound('Domain');
    return domain;
  };

  return {
    settings,
    get,
    list: (workspaceId: string) => listDomains(db, workspaceId),

    /**
     * Generates the domain's DKIM key and claims the name: a 409 when this workspace already has it or another
     * workspace has verified it. Other workspaces' unverified claims do not stop it; the first to verify wins.
     */
    async create(workspaceId: string, input: CreateDomainInput): Promise<DomainRecord> {
      const key = await generateDkimKeyPair();
      const claim = await insertDomain(db, workspaceId, {
        name: input.name,
        region: input.region ?? defaultRegion,
        defaultFromName: input.defaultFromName ?? null,
        dkimSelector: key.selector,
        dkimPublicKey: key.publicKey,
        dkimPrivateKeySealed: sealSecret(keyring, { workspaceId, column: 'domains.dkim_private_key', row: input.name }, key.privateKeyPem),
      });
      if ('takenBy' in claim) {
        throw claim.takenBy === 'this-workspace'
          ? new AppError('conflict', `${input.name} is already added to this workspace`, { id: claim.id })
          : new AppError('conflict', `${input.name} is already verified by another workspace`);
      }
      await verification.watch(claim.created);
      return claim.created;
    },

    async update(workspaceId: string, domainId: string, input: UpdateDomainInput): Promise<DomainRecord> {
      const domain = await get(workspaceId, domainId);
      const changes: { defaultFromName?: string | null; defaultFromAddress?: string | null } = {};
      if (input.defaultFromName !== undefined) changes.defaultFromName = input.defaultFromName;
      if (input.defaultFromAddress !== undefined) {
        changes.defaultFromAddress = input.defaultFromAddress === null ? null : addressOnDomain(input.defaultFromAddress, domain.name);
      }
      const updated = await updateDomainDefaults(db, workspaceId, domainId, changes);
      if (!updated) throw AppError.notFound('Domain');
      return updated;
    },

    /** Checks the records now, then makes sure the background checks run (a new window when none does). */
    async verify(workspaceId: string, domainId: string): Promise<DomainRecord> {
      const domain = await get(workspaceId, domainId);
      await verification.checkNow(domain);
      await verification.watch(domain);
      return get(workspaceId, domainId);
    },

    /**
     * Deletes a domain nothing sends from: its DKIM keys and record checks go with the row, the messages it
     * sent stay (they name their sender by address). 409 conflict names what still uses it (usedBy).
     */
    async remove(workspaceId: string, domainId: string): Promise<void> {
      const outcome = await deleteUnusedDomain(db, workspaceId, domainId);
      if (outcome.deleted) {
        // Only the workspace that verified the name registered it with the provider: another workspace's
        // verified domain of this name owns the identity, and keeps it.
        if (forgetAtProvider && !(await isVerifiedElsewhere(db, workspaceId, outcome.domain.name))) {
          // The domain is gone either way: a provider that cannot be reached now leaves an identity that signs
          // nothing of ours (the send path refuses the domain), for an operator to remove.
          await forgetAtProvider(outcome.domain).catch((error: unknown) => logger?.warn({ err: error, domain: outcome.domain.name }, 'the deleted domain is still registered with SES'));
        }
        return;
      }
      if (outcome.reason === 'not_found') throw AppError.notFound('Domain');
      throw new AppError('conflict', 'The domain is still used: cancel these campaigns (or let them finish), archive these journeys and delete these inboxes first', {
        usedBy: outcome.usedBy,
      });
    },

    async setInbound(workspaceId: string, domainId: string, enabled: boolean): Promise<DomainRecord> {
      const domain = await setInboundEnabled(db, workspaceId, domainId, enabled);
      if (!domain) throw AppError.notFound('Domain');
      return domain;
    },
  };
}

/** The default from address must be a mailbox of this very domain (not a subdomain, not another domain). */
function addressOnDomain(given: string, domainName: string): string {
  const normalised = normaliseAddress(given.trim());
  if (!normalised.ok) throw invalidFromAddress(`"${given}" is not a valid email address: ${normalised.reason}`);
  if (domainOf(normalised.address) !== domainName) throw invalidFromAddress(`The default from address must be on ${domainName}`);
  return normalised.address;
}

const invalidFromAddress = (message: string): AppError =>
  AppError.validation({ formErrors: [], fieldErrors: { defaultFromAddress: [message] } });

export type DomainService = ReturnType<typeof createDomainService>;

/** Deletions are rare: a client for the one call, closed after it, rather than one the API keeps open. */
async function forgetAtSes(domain: { name: string; region: string }): Promise<void> {
  const clients = createSesClients();
  try {
    await createSesDomainIdentities(clients).remove(domain);
  } finally {
    clients.destroy();
  }
}

/** The service as the deployment configures it. */
export function domainServiceFromConfig(deps: { db: Sequelize; config: Config; temporal: Client; logger: Logger }): DomainService {
  const { config } = deps;
  return createDomainService({
    db: deps.db,
    settings: { spfInclude: config.PLATFORM_SPF_INCLUDE, inboundMxHost: config.INBOUND_MX_HOST },
    keyring: configKeyring(config),
    defaultRegion: config.AWS_REGION,
    forgetAtProvider: config.EMAIL_PROVIDER === 'ses' ? forgetAtSes : undefined,
    logger: deps.logger,
    verification: createDomainVerification({
      temporal: deps.temporal,
      taskQueuePrefix: config.TASK_QUEUE_PREFIX,
      logger: deps.logger,
    }),
  });
}
