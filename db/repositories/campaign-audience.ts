import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AudienceRules } from '../../core/audience-rules';
import { heldOutSql } from '../../core/campaign-holdout';
import { CHANNELS, type Channel } from '../../core/identities';
import { fieldsByKey } from '../../core/custom-fields';
import { inAudienceSession } from '../audience-session';
import { BindParams } from '../bind-params';
import { type AudienceQueryContext, audienceCondition } from '../segment-query';
import { listCustomFields } from './custom-fields';
import { findList } from './lists';
import { findSegment } from './segments';

export type ResolvedAudience = { rules: AudienceRules; context: AudienceQueryContext } | { missing: 'audience' | 'list' | 'segment' };

/**
 * A campaign's audience as rules: a static list's members, or a segment's rules evaluated now (with the
 * workspace's custom fields, which type its attribute conditions). `missing` when the campaign names
 * neither, or its list or segment was deleted.
 */
export async function resolveAudience(
  db: Sequelize,
  workspaceId: string,
  target: { listId: string | null; segmentId: string | null },
  now: Date,
): Promise<ResolvedAudience> {
  const fields = async () => fieldsByKey(await listCustomFields(db, workspaceId));
  if (target.listId) {
    if (!(await findList(db, workspaceId, target.listId))) return { missing: 'list' };
    const rules: AudienceRules = { type: 'group', operator: 'and', rules: [{ type: 'list', operator: 'member', listId: target.listId }] };
    return { rules, context: { fields: await fields(), now } };
  }
  if (target.segmentId) {
    const segment = await findSegment(db, workspaceId, target.segmentId);
    if (!segment) return { missing: 'segment' };
    return { rules: segment.definition, context: { fields: await fields(), now } };
  }
  return { missing: 'audience' };
}

/**
 * The SQL of who a campaign reaches, on its channels in order (core/campaign-channels.ts): each contact of
 * the audience is reached on the first channel where it has a usable primary identity (a contact keeps
 * exactly one per channel) whose address is not suppressed on that channel (bounced, complained,
 * unsubscribed, erased, or added by hand). Usable follows core/message-channels.ts `marketingIdentity`:
 * email is reached unless opted out (`unknown` consent is reached: contacts imported without a declared
 * consent are the usual case, and an unsubscribe both opts out and suppresses); WhatsApp and Telegram
 * need a verified, opted-in identity, as their providers' rules for promotional messages do. `channel` and
 * `address` are the chosen ones; `noAddress` holds for members with no usable identity on any channel.
 */
function campaignAudience(workspaceId: string, rules: AudienceRules, context: AudienceQueryContext, channels: readonly Channel[] = ['email']) {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  const condition = audienceCondition(rules, context, params, workspace);
  const joins: string[] = [];
  const usable: string[] = [];
  const reached: Array<{ channel: string; address: string; when: string }> = [];
  const named = new Map<Channel, string>();
  channels.forEach((channel, n) => {
    const name = params.add(channel, 'text');
    named.set(channel, name);
    const consent = channel === 'email' ? `i${n}.consent <> 'opted_out'` : `i${n}.verified AND i${n}.consent = 'opted_in'`;
    joins.push(`LEFT JOIN contact_identities i${n} ON i${n}.workspace_id = ${workspace} AND i${n}.contact_id = c.id AND i${n}.channel = ${name} AND i${n}.is_primary AND ${consent}
      LEFT JOIN suppressions s${n} ON s${n}.workspace_id = ${workspace} AND s${n}.channel = ${name} AND s${n}.address = i${n}.address`);
    usable.push(`i${n}.address IS NULL`);
    reached.push({ channel: name, address: `i${n}.address`, when: `(i${n}.address IS NOT NULL AND s${n}.address IS NULL)` });
  });
  return {
    params,
    workspace,
    from: `contacts c
      ${joins.join('\n      ')}`,
    where: `c.workspace_id = ${workspace} AND ${condition}`,
    eligible: `(${reached.map((step) => step.when).join(' OR ')})`,
    channel: `CASE ${reached.map((step) => `WHEN ${step.when} THEN ${step.channel}`).join(' ')} END`,
    address: `CASE ${reached.map((step) => `WHEN ${step.when} THEN ${step.address}`).join(' ')} END`,
    noAddress: `(${usable.join(' AND ')})`,
    /** Each channel of the campaign with its bind parameter, to count by the chosen `channel`. */
    named,
  };
}

/** A count per channel of the campaign (`on_<channel>`) of rows where `condition` holds; no new parameters. */
function countsByChannel(named: Map<Channel, string>, channelColumn: string, condition: string): string {
  return [...named].map(([channel, name]) => `count(*) FILTER (WHERE ${condition} AND ${channelColumn} = ${name}) AS on_${channel}`).join(', ');
}

function byChannelOf(row: Partial<Record<`on_${Channel}`, string>>): Record<Channel, number> {
  return Object.fromEntries(CHANNELS.map((channel) => [channel, Number(row[`on_${channel}`] ?? 0)])) as Record<Channel, number>;
}

/** The audience's members alone, with bind parameters of their own. */
function membersOf(workspaceId: string, rules: AudienceRules, context: AudienceQueryContext) {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  return { params, sql: `c.workspace_id = ${workspace} AND ${audienceCondition(rules, context, params, workspace)}` };
}

/** A campaign's holdout: its id and percent decide who is held out (core/campaign-holdout.ts). */
export interface AudienceHoldout {
  campaignId: string;
  percent: number;
}

export interface AudienceEstimate {
  /** Contacts in the list or segment. */
  members: number;
  /** Those the campaign would send to now (reached and not held out). */
  recipients: number;
  /** Those it could reach but holds out (0 without a holdout). */
  heldOut: number;
  /** The recipients by the channel each would be sent on (0 for channels the campaign does not use). */
  byChannel: Record<Channel, number>;
  /** Members with no usable identity on any channel of the campaign. */
  noAddress: number;
  /** Up to 5 addresses it would send to. */
  sample: string[];
}

/**
 * Counts the audience, who of it the campaign reaches and who of those it holds out, in one pass over the
 * audience, and picks up to 5 addresses it sends to (whichever the plan finds first: ordering them would
 * make a rare audience walk every contact). Two connections at once, as a segment preview does.
 */
export async function estimateAudience(
  db: Sequelize,
  workspaceId: string,
  rules: AudienceRules,
  context: AudienceQueryContext,
  holdout: AudienceHoldout | null = null,
  channels: readonly Channel[] = ['email'],
): Promise<AudienceEstimate> {
  const audience = campaignAudience(workspaceId, rules, context, channels);
  const held = holdout && holdout.percent > 0 ? heldOutSql(audience.params.add(holdout.campaignId, 'uuid'), 'c.id', audience.params.add(holdout.percent, 'int')) : 'false';
  const perChannel = countsByChannel(audience.named, audience.channel, `${audience.eligible} AND NOT ${held}`);
  const [counted, sample] = await Promise.all([
    inAudienceSession(db, (transaction) =>
      db.query<{ members: string; recipients: string; held_out: string; no_address: string } & Partial<Record<`on_${Channel}`, string>>>(
        `SELECT count(*) AS members, count(*) FILTER (WHERE ${audience.eligible} AND NOT ${held}) AS recipients,
           count(*) FILTER (WHERE ${audience.eligible} AND ${held}) AS held_out, count(*) FILTER (WHERE ${audience.noAddress}) AS no_address,
           ${perChannel}
         FROM ${audience.from} WHERE ${audience.where}`,
        { bind: audience.params.values, type: QueryTypes.SELECT, transaction },
      ),
    ),
    inAudienceSession(db, (transaction) =>
      db.query<{ address: string }>(`SELECT ${audience.address} AS address FROM ${audience.from} WHERE ${audience.where} AND ${audience.eligible} AND NOT ${held} LIMIT 5`, {
        bind: audience.params.values,
        type: QueryTypes.SELECT,
        transaction,
      }),
    ),
  ]);
  return {
    members: Number(counted[0].members),
    recipients: Number(counted[0].recipients),
    heldOut: Number(counted[0].held_out),
    byChannel: byChannelOf(counted[0]),
    noAddress: Number(counted[0].no_address),
    sample: sample.map((row) => row.address),
  };
}

/** A campaign sent at a local time of day: each recipient's moment, from the send's start. */
export interface LocalSendTime {
  /** "HH:MM". */
  at: string;
  /** The zone of contacts without a valid `timezone` attribute (the workspace's). */
  defaultZone: string;
  start: Date;
}

/**
 * Writes who the campaign reaches now into its recipients, in one statement inside the caller's transaction
 * (which also marks the snapshot taken, so a retry after a commit finds it done and one before it finds
 * nothing written). Those it sends to are numbered 1..n, the positions the feed pages through; those its
 * holdout keeps out (`holdout`, decided by campaign and contact, so a retry picks the same people) are
 * numbered -1..-h, below any cursor, so the feed never meets them. With a local send time, each sent
 * recipient's `send_after` is fixed here and the numbering follows it, so the feed's cursor meets recipients
 * as they come due. A zone PostgreSQL does not know counts as absent. Each recipient carries the channel
 * it is sent on (the first of `channels` that reaches it). Returns how many of each, the recipients sent
 * to by channel, and how many members no channel reaches (`unreachable`, counted in a second pass).
 */
export async function snapshotAudience(
  db: Sequelize,
  workspaceId: string,
  campaignId: string,
  rules: AudienceRules,
  context: AudienceQueryContext,
  transaction: Transaction,
  localTime: LocalSendTime | null = null,
  holdoutPercent = 0,
  channels: readonly Channel[] = ['email'],
): Promise<{ recipients: number; heldOut: number; byChannel: Record<Channel, number>; unreachable: number }> {
  const audience = campaignAudience(workspaceId, rules, context, channels);
  const memberCondition = membersOf(workspaceId, rules, context);
  const campaign = audience.params.add(campaignId, 'uuid');
  // One large write: no JIT (its compile time is wasted here), memory to hash the identities at once.
  await db.query("SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true), set_config('statement_timeout', '5min', true)", {
    type: QueryTypes.SELECT,
    transaction,
  });
  const columns = `c.id, ${audience.address} AS address, ${audience.channel} AS channel${localTime ? ", c.attributes->>'timezone' AS zone" : ''}`;
  const reached = `SELECT ${columns} FROM ${audience.from} WHERE ${audience.where} AND ${audience.eligible}`;
  // With a holdout the audience is read once into `reached` (with each contact's pick) and split from there.
  const held = holdoutPercent > 0 ? heldOutSql(campaign, 'c.id', audience.params.add(holdoutPercent, 'int')) : null;
  const sent = held ? '(SELECT * FROM reached WHERE NOT held)' : `(${reached})`;
  let select = `SELECT ${campaign}, row_number() OVER (), ${audience.workspace}, r.id, r.address, r.channel, NULL::timestamptz, false FROM ${sent} r`;
  if (localTime) {
    const start = audience.params.add(localTime.start.toISOString(), 'timestamptz');
    const at = audience.params.add(localTime.at, 'time');
    const fallback = audience.params.add(localTime.defaultZone, 'text');
    select = `SELECT ${campaign}, row_number() OVER (ORDER BY t.due, t.id), ${audience.workspace}, t.id, t.address, t.channel, t.due, false FROM (
        SELECT r.id, r.address, r.channel, local_send_after(${start}, ${at}, COALESCE(z.name, d.zone)) AS due
        FROM ${sent} r
        CROSS JOIN (SELECT COALESCE((SELECT name FROM pg_timezone_names WHERE name = ${fallback}), 'UTC') AS zone) d
        LEFT JOIN (SELECT name FROM pg_timezone_names) z ON z.name = r.zone
      ) t`;
  }
  if (held) {
    select += `
       UNION ALL
       SELECT ${campaign}, -row_number() OVER (), ${audience.workspace}, h.id, h.address, h.channel, NULL::timestamptz, true FROM reached h WHERE h.held`;
  }
  const perChannel = countsByChannel(audience.named, 'channel', 'NOT holdout');
  const rows = await db.query<{ recipients: string; held_out: string } & Partial<Record<`on_${Channel}`, string>>>(
    `WITH ${held ? `reached AS MATERIALIZED (SELECT ${columns}, ${held} AS held FROM ${audience.from} WHERE ${audience.where} AND ${audience.eligible}),` : ''}
     written AS (
       INSERT INTO campaign_recipients (campaign_id, position, workspace_id, contact_id, address, channel, send_after, holdout)
       ${select}
       RETURNING holdout, channel
     )
     SELECT count(*) FILTER (WHERE NOT holdout) AS recipients, count(*) FILTER (WHERE holdout) AS held_out, ${perChannel} FROM written`,
    { bind: audience.params.values, type: QueryTypes.SELECT, transaction },
  );
  const [counted] = await db.query<{ members: string }>(`SELECT count(*) AS members FROM contacts c WHERE ${memberCondition.sql}`, {
    bind: memberCondition.params.values,
    type: QueryTypes.SELECT,
    transaction,
  });
  const recipients = Number(rows[0].recipients);
  const heldOut = Number(rows[0].held_out);
  return {
    recipients,
    heldOut,
    byChannel: byChannelOf(rows[0]),
    unreachable: Number(counted.members) - recipients - heldOut,
  };
}
