import type { Sequelize } from 'sequelize';
import { type Config, configKeyring } from '../core/config';
import type { DnsLookup } from '../core/dns-answers';
import type { RecordSettings } from '../core/dns-records';
import { checkDomainRecords, type DomainCheck, type RecordCheck } from '../core/domain-checks';
import { type DomainStatus, nextDomainStatus, statusEvent, VERIFICATION_WINDOW_MS } from '../core/domain-status';
import { type Keyring, openSecret } from '../core/secrets';
import { type DomainRecord, findDomain, findSigningKey, findUnwatchedDomains, isVerifiedElsewhere, saveDomainCheck } from '../db/repositories/domains';
import { insertPlatformEvent } from '../db/repositories/platform-events';
import type { SesClients } from '../providers/ses/clients';
import { createDnsLookup } from './dns-lookup';
import { createSesDomainIdentities, type SesDomainIdentities } from '../providers/ses/domain-identity';

export interface DomainActivityDeps {
  db: Sequelize;
  lookup: DnsLookup;
  settings: RecordSettings;
  keyring: Keyring;
  /** Present when SES sends the mail: a domain whose records check is registered there with our DKIM key. */
  ses?: SesDomainIdentities;
}

export interface CheckDomainInput {
  workspaceId: string;
  domainId: string;
  /** Whether failing records turn a pending domain into `failed` (see core/domain-status.ts). */
  failPending: boolean;
  /** The last check of a verification window: a domain still not verified is an expired claim. */
  windowEnded?: boolean;
}

export type CheckDomainResult =
  | { found: false }
  | { found: true; status: DomainStatus; previousStatus: DomainStatus; detail: string | null; records: RecordCheck[] };

/** How long a domain may go without any check before the watchdog starts its verification. */
const UNWATCHED_AFTER_MS = 10 * 60 * 1000;
/** A verified domain is re-checked daily; two days without a check means its watch has stopped. */
const VERIFIED_STALE_AFTER_MS = 48 * 60 * 60 * 1000;

export function createDomainActivities(deps: DomainActivityDeps) {
  const { db } = deps;
  return {
    /**
     * Looks up the domain's records, judges them, registers a passing domain with SES when SES sends, and
     * stores the verdict with its event in one transaction. Used by the verify route and the background checks.
     */
    async checkDomain(input: CheckDomainInput): Promise<CheckDomainResult> {
      const domain = await findDomain(db, input.workspaceId, input.domainId);
      if (!domain) return { found: false };
      let check = await checkDomainRecords(deps.lookup, domain, deps.settings);
      // Asked before SES: registering a name another workspace sends from would replace its DKIM key there.
      const lost = check.outcome === 'verified' && (await isVerifiedElsewhere(db, domain.workspaceId, domain.name));
      if (check.outcome === 'verified' && !lost && deps.ses) check = await registerWithSes(deps, domain, check);
      return db.transaction(async (transaction) => {
        const locked = await findDomain(db, input.workspaceId, input.domainId, transaction);
        if (!locked) return { found: false as const };
        let verdict = lost ? lostClaim(locked) : judge(locked.status, check, input);
        let stored = await saveDomainCheck(db, input.workspaceId, input.domainId, { ...verdict, recordChecks: check.records }, transaction);
        if ('verifiedElsewhere' in stored) {
          // Another workspace's check of this name passed at the same moment and committed first.
          verdict = lostClaim(locked);
          stored = await saveDomainCheck(db, input.workspaceId, input.domainId, { ...verdict, recordChecks: check.records }, transaction);
        }
        const { status, detail } = verdict;
        const event = statusEvent(locked.status, status);
        if (event && 'saved' in stored && stored.saved) {
          await insertPlatformEvent(
            db,
            input.workspaceId,
            { type: event, data: { id: locked.id, name: locked.name, status, previousStatus: locked.status, detail, records: check.records } },
            transaction,
          );
        }
        return { found: true as const, status, previousStatus: locked.status, detail, records: check.records };
      });
    },

    /** Domains whose background verification never ran or stopped, for the watchdog to start again. */
    async findUnwatchedDomains(input: { limit: number }): Promise<Array<{ id: string; workspaceId: string }>> {
      const now = Date.now();
      return findUnwatchedDomains(db, {
        createdBefore: new Date(now - UNWATCHED_AFTER_MS),
        verifiedCheckedBefore: new Date(now - VERIFIED_STALE_AFTER_MS),
        limit: input.limit,
      });
    },
  };
}

interface Verdict {
  status: DomainStatus;
  detail: string | null;
}

const WINDOW_HOURS = VERIFICATION_WINDOW_MS / (60 * 60 * 1000);

/** What a check makes of the domain. The window's last check leaves a claim still failing `failed`: it has expired. */
function judge(current: DomainStatus, check: DomainCheck, input: CheckDomainInput): Verdict {
  const status = nextDomainStatus(current, check.outcome, { failPending: input.failPending });
  const detail = check.detail ?? null;
  if (!input.windowEnded || status !== 'failed') return { status, detail };
  const expired =
    `The ${WINDOW_HOURS}-hour verification window has passed without the records checking, so this claim has expired; ` +
    'it reserves nothing. Correct the records and call POST /domains/{id}/verify to check again and open a new window.';
  return { status, detail: detail ? `${detail} ${expired}` : expired };
}

/**
 * Names are unique among verified domains: the first workspace to verify a name keeps it, and another
 * workspace's claim fails whatever its records say (decided here, and by a unique index when two race).
 */
function lostClaim(domain: DomainRecord): Verdict {
  return {
    status: 'failed',
    detail:
      `${domain.name} is already verified by another workspace. A domain sends for one workspace only, the first to ` +
      'verify it, so this claim cannot be verified while that one stays verified.',
  };
}

/**
 * With SES as the provider, a domain can send only once SES has its key and has seen the DKIM record
 * itself; until then the check is inconclusive (the status stays) and says what SES is waiting for.
 */
async function registerWithSes(deps: DomainActivityDeps, domain: DomainRecord, check: DomainCheck): Promise<DomainCheck> {
  const key = await findSigningKey(deps.db, domain.workspaceId, domain.name);
  if (!key || !deps.ses) return check;
  const registration = await deps.ses.register({
    name: domain.name,
    region: domain.region,
    selector: key.selector,
    privateKeyPem: openSecret(deps.keyring, { workspaceId: domain.workspaceId, column: 'domains.dkim_private_key', row: key.domainName }, key.privateKeySealed),
  });
  if (registration.verifiedForSending) return check;
  return {
    ...check,
    outcome: 'inconclusive',
    detail:
      `The DNS records of ${domain.name} are correct; Amazon SES is still verifying its DKIM record (SES status ` +
      `${registration.dkimStatus}). This usually takes a few minutes and is checked again automatically.`,
  };
}

export type DomainActivities = ReturnType<typeof createDomainActivities>;

/** The domain activities' dependencies as the deployment configures them (`sesClients`: the process's own). */
export function domainActivityDeps(db: Sequelize, config: Config, sesClients: SesClients): DomainActivityDeps {
  return {
    db,
    lookup: createDnsLookup({ servers: config.DNS_SERVERS }),
    settings: { spfInclude: config.PLATFORM_SPF_INCLUDE, inboundMxHost: config.INBOUND_MX_HOST },
    keyring: configKeyring(config),
    ses: config.EMAIL_PROVIDER === 'ses' ? createSesDomainIdentities(sesClients) : undefined,
  };
}
