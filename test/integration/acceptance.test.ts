import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { loadConfig } from '../../core/config';
import { AppError } from '../../core/errors';
import { PLANS, usagePeriodAt } from '../../core/plans';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { suppressAddresses } from '../../db/repositories/suppressions';
import { reserveQuota, usedInPeriod } from '../../db/repositories/usage';
import { createSequelize } from '../../db/sequelize';
import { createEmailAcceptance, type EmailAcceptance } from '../../services/acceptance/email-acceptance';
import type { SendEmailInput } from '../../services/acceptance/email-draft';
import type { Sender, SendOutcome } from '../../services/acceptance/outcome';
import { createSendChecks, verifiedDomainCache } from '../../services/acceptance/send-checks';
import { createAttachmentSources } from '../../services/attachment-sources';
import { createTestWorkspace } from '../helpers/workspaces';

const codeOf = (outcome: SendOutcome) => (outcome.status === 'failed' ? outcome.error.code : null);

/**
 * The one acceptance every send goes through (services/acceptance), without the HTTP edge: the routes of
 * POST /emails, its batch, POST /messages and inbox mail only validate and map its outcomes.
 */
describe('acceptance (services/acceptance)', () => {
  let db: Sequelize;
  let blobs: BlobStore;
  let emails: EmailAcceptance;
  let masterKey: string;

  beforeAll(() => {
    const config = loadConfig(process.env);
    masterKey = config.MASTER_KEY;
    db = createSequelize(config.DATABASE_URL);
    blobs = createBlobStore(blobStoreOptions(config));
    const sources = createAttachmentSources({ db, blobs });
    emails = createEmailAcceptance({ db, checks: createSendChecks({ db, sources, verifiedDomain: verifiedDomainCache(db, 0) }) });
  });
  afterAll(async () => {
    blobs.close();
    await db.close();
  });

  const email = (from: string, to: string, idempotencyKey = `key-${randomUUID()}`): SendEmailInput => ({
    from, to, subject: 'Hello', text: 'Hi', idempotencyKey, disableTracking: false, disableUtm: false,
  });

  it('a batch of a good email, a suppressed one, one from an unverified domain, a schema failure and a repeat → an outcome each, none thrown', async () => {
    const { workspaceId, domain } = await createTestWorkspace(db, { domain: { masterKey } });
    const sender: Sender = { workspaceId, plan: 'free' };
    await suppressAddresses(db, workspaceId, 'email', ['gone@example.org'], 'hard_bounce');
    const first = email(`news@${domain}`, 'ann@example.org');
    const refusedBySchema = AppError.validation({ formErrors: [], fieldErrors: { to: ['Required'] } });

    const outcomes = await emails.sendBatch(sender, [
      first,
      email(`news@${domain}`, 'gone@example.org'),
      email('news@not-ours.example.com', 'bob@example.org'),
      refusedBySchema,
      { ...first, text: 'Changed' },
    ]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['accepted', 'failed', 'failed', 'failed', 'duplicate']);
    expect(outcomes.map(codeOf)).toEqual([null, 'suppressed', 'domain_not_verified', 'validation_error', null]);
    expect(outcomes[4]).toEqual({ status: 'duplicate', id: outcomes[0].status === 'accepted' && outcomes[0].id, bodyMismatch: true });
    expect(await usedInPeriod(db, workspaceId, usagePeriodAt(new Date()))).toBe(1);
  });

  it('a batch the month\'s quota covers only in part → the first fits, the second answers quota_exceeded, usage stops at the limit', async () => {
    const { workspaceId, domain } = await createTestWorkspace(db, { plan: 'free', domain: { masterKey } });
    const period = usagePeriodAt(new Date());
    await reserveQuota(db, workspaceId, PLANS.pro, period, PLANS.free.monthlyMessages - 1, { channel: 'email', kind: 'transactional' });

    const outcomes = await emails.sendBatch({ workspaceId, plan: 'free' }, [email(`a@${domain}`, 'one@example.org'), email(`a@${domain}`, 'two@example.org')]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['accepted', 'failed']);
    expect(codeOf(outcomes[1])).toBe('quota_exceeded');
    expect(await usedInPeriod(db, workspaceId, period)).toBe(PLANS.free.monthlyMessages);
  });

  it('two single sends racing with one key → one row, and the other answers as a duplicate of it', async () => {
    const { workspaceId, domain } = await createTestWorkspace(db, { domain: { masterKey } });
    const input = email(`a@${domain}`, 'race@example.org');

    const [a, b] = await Promise.all([emails.sendWithHash({ workspaceId, plan: 'free' }, input, 'h'), emails.sendWithHash({ workspaceId, plan: 'free' }, input, 'h')]);

    const ids = [a, b].map((outcome) => (outcome.status === 'failed' ? null : outcome.id));
    expect(new Set([a.status, b.status])).toEqual(new Set(['accepted', 'duplicate']));
    expect(ids[0]).toBe(ids[1]);
    expect(await usedInPeriod(db, workspaceId, usagePeriodAt(new Date()))).toBe(1);
  });
});
