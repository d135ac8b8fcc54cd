import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { QueryTypes } from 'sequelize';
import { suppressAddresses } from '../../db/repositories/suppressions';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { seedContacts } from '../helpers/campaigns';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { receiveMail } from '../helpers/inbox-mail';

type Call = ReturnType<ApiHarness['as']>;
type Row = Record<string, string>;

describe('contact exports', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  async function workspace() {
    const created = await createTestWorkspace(api);
    return created;
  }

  async function contact(call: Call, body: unknown): Promise<string> {
    const response = await call('POST', '/contacts', body);
    expect(response.status).toBe(201);
    return (response.body as { id: string }).id;
  }

  /** GET the CSV as text (the harness keeps a non-JSON body as text) and parse it back by its header. */
  async function exported(call: Call, query = ''): Promise<{ header: string[]; rows: Row[]; response: Awaited<ReturnType<Call>> }> {
    const response = await call('GET', `/contacts/export${query}`);
    expect(response.status).toBe(200);
    const records = parse(response.body as string, { relax_column_count: false }) as string[][];
    const [header, ...data] = records;
    return { header, rows: data.map((fields) => Object.fromEntries(header.map((name, i) => [name, fields[i]]))), response };
  }

  it('GET /contacts/export streams every contact as CSV that parses back: primary identities, consent, tags, lists and one attribute:<key> column per key', async () => {
    const { call } = await workspace();
    const ann = await contact(call, {
      identities: [
        { channel: 'email', address: 'Ann@Example.org', consent: 'opted_in' },
        { channel: 'whatsapp', address: '+14155552671' },
      ],
      attributes: { firstName: 'Ann', plan: 'pro', seats: 3, vip: true, address: { city: 'Lyon' }, note: 'line one\nline "two", three' },
    });
    const bob = await contact(call, { identities: [{ channel: 'telegram', address: '123456789' }], attributes: { firstName: 'Bob' } });
    await call('POST', `/contacts/${ann}/tags`, { tags: ['VIP', 'early'] });
    const list = (await call('POST', '/lists', { name: 'Newsletter' })).body as { id: string };
    await call('POST', `/lists/${list.id}/contacts`, { contactIds: [ann] });

    const { header, rows, response } = await exported(call);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="contacts.csv"');
    expect(header).toEqual([
      'id', 'createdAt', 'email', 'phone', 'telegram', 'consent', 'tags', 'lists',
      'attribute:address', 'attribute:firstName', 'attribute:note', 'attribute:plan', 'attribute:seats', 'attribute:vip',
    ]);
    expect(rows.map((row) => row.id)).toEqual([ann, bob].sort());
    const annRow = rows.find((row) => row.id === ann);
    expect(annRow).toEqual({
      id: ann, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), email: 'ann@example.org', phone: '+14155552671', telegram: '', consent: 'opted_in',
      tags: 'early,VIP', lists: 'Newsletter', 'attribute:address': '{"city":"Lyon"}', 'attribute:firstName': 'Ann',
      'attribute:note': 'line one\nline "two", three', 'attribute:plan': 'pro', 'attribute:seats': '3', 'attribute:vip': 'true',
    });
    expect(rows.find((row) => row.id === bob)).toMatchObject({ email: '', telegram: '123456789', consent: 'unknown', tags: '', 'attribute:firstName': 'Bob', 'attribute:plan': '' });
  });

  it('a value that a spreadsheet would run as a formula is written as text (a leading \'), a phone number is not', async () => {
    const { call } = await workspace();
    await contact(call, {
      identities: [{ channel: 'email', address: 'mallory@example.org' }, { channel: 'whatsapp', address: '+14155552671' }],
      attributes: { firstName: '=HYPERLINK("http://evil.example","x")', lastName: '@SUM(1+1)', company: '+cmd|\' /C calc\'!A0', score: -5, code: '-2+3' },
    });
    const [row] = (await exported(call)).rows;
    expect(row).toMatchObject({
      phone: '+14155552671',
      'attribute:firstName': '\'=HYPERLINK("http://evil.example","x")',
      'attribute:lastName': '\'@SUM(1+1)',
      'attribute:company': '\'+cmd|\' /C calc\'!A0',
      'attribute:score': '-5',
      'attribute:code': '\'-2+3',
    });
  });

  it('?listId, ?tagId and ?segmentId export only their contacts; an unknown segment is 404, a malformed id 422', async () => {
    const { call } = await workspace();
    const pro = await contact(call, { identities: [{ channel: 'email', address: 'pro@example.org' }], attributes: { plan: 'pro' } });
    const free = await contact(call, { identities: [{ channel: 'email', address: 'free@example.org' }], attributes: { plan: 'free' } });
    const list = (await call('POST', '/lists', { name: 'L' })).body as { id: string };
    await call('POST', `/lists/${list.id}/contacts`, { contactIds: [free] });
    await call('POST', `/contacts/${pro}/tags`, { tags: ['paying'] });
    const tagId = ((await call('GET', '/tags')).body as { data: Array<{ id: string; name: string }> }).data.find((tag) => tag.name === 'paying')?.id;
    const segment = (await call('POST', '/segments', { name: 'Pro', definition: { operator: 'and', rules: [{ type: 'attribute', key: 'plan', operator: 'eq', value: 'pro' }] } })).body as { id: string };

    expect((await exported(call, `?listId=${list.id}`)).rows.map((row) => row.id)).toEqual([free]);
    expect((await exported(call, `?tagId=${tagId}`)).rows.map((row) => row.id)).toEqual([pro]);
    expect((await exported(call, `?segmentId=${segment.id}`)).rows.map((row) => row.id)).toEqual([pro]);
    expect(await call('GET', `/contacts/export?segmentId=${randomUUID()}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await call('GET', '/contacts/export?listId=nope')).toMatchObject({ status: 422 });
  });

  it('5,000 contacts are exported in id-ordered pages, each exactly once; another workspace\'s contacts never appear', async () => {
    const { call, workspaceId } = await workspace();
    const other = await workspace();
    const seeded = await seedContacts(api.db, workspaceId, { count: 5_000, prefix: `many-${workspaceId.slice(0, 8)}`, attributes: (i) => ({ n: i }) });
    await seedContacts(api.db, other.workspaceId, { count: 10, prefix: `other-${other.workspaceId.slice(0, 8)}` });
    const { rows } = await exported(call);
    expect(rows).toHaveLength(5_000);
    expect(rows.map((row) => row.id)).toEqual(seeded.map((c) => c.id).sort());
    expect(new Set(rows.map((row) => row.email))).toEqual(new Set(seeded.map((c) => c.address)));
    expect((await exported(other.call)).rows).toHaveLength(10);
  });

  it('GET /contacts/:id/export → a JSON attachment with the contact, identities, consent, tags, lists, suppressions, messages with events, events and inbox mail; a foreign id 404', async () => {
    const { call, workspaceId } = await workspace();
    const id = await contact(call, {
      identities: [{ channel: 'email', address: 'dsr@example.org', consent: 'opted_out' }],
      attributes: { firstName: 'Dana' },
    });
    await call('POST', `/contacts/${id}/tags`, { tags: ['vip'] });
    await suppressAddresses(api.db, workspaceId, 'email', ['dsr@example.org'], 'unsubscribed');
    const [messageId] = await queueMessages(api.db, workspaceId, { kind: 'transactional', count: 1, from: 'shop@example.com' });
    await api.db.query('UPDATE messages SET contact_id = $2 WHERE id = $1', { bind: [messageId, id] });
    await api.db.query("INSERT INTO message_events (id, workspace_id, message_id, type) VALUES (gen_random_uuid(), $1, $2, 'delivered')", { bind: [workspaceId, messageId] });
    await api.db.query("INSERT INTO contact_events (id, workspace_id, contact_id, name, properties, occurred_at) VALUES (gen_random_uuid(), $1, $2, 'signed_up', '{\"plan\":\"pro\"}', now())", { bind: [workspaceId, id] });

    const domain = (await addTestDomain(api, workspaceId)).domain;
    const inbox = ((await call('POST', '/inboxes', { domain, localPart: 'help' })).body as { inbox: { id: string; address: string } }).inbox;
    await receiveMail(api.db, { workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@example.org`, from: { address: 'DSR@example.org' }, to: [inbox.address], subject: 'Delete me', text: 'Please' });
    await receiveMail(api.db, { workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@example.org`, from: { address: 'someone@example.org' }, to: [inbox.address], subject: 'Other', text: 'x' });

    const response = await call('GET', `/contacts/${id}/export`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="contact-${id}.json"`);
    expect(response.body).toMatchObject({
      contact: { id },
      attributes: { firstName: 'Dana' },
      consent: { email: 'opted_out' },
      identities: [{ channel: 'email', address: 'dsr@example.org', consent: 'opted_out', primary: true }],
      tags: [{ name: 'vip' }],
      lists: [],
      suppressions: [{ channel: 'email', address: 'dsr@example.org', reason: 'unsubscribed' }],
      messages: [{ id: messageId, kind: 'transactional', channel: 'email', events: [{ type: 'delivered' }] }],
      contactEvents: [{ name: 'signed_up', properties: { plan: 'pro' } }],
      conversions: [],
      orders: [],
      inboxMessages: [{ inboxId: inbox.id, subject: 'Delete me', text: 'Please' }],
      enrollments: [],
      limits: { messages: 1_000, contactEvents: 1_000 },
      truncated: [],
    });

    const stranger = await workspace();
    expect(await stranger.call('GET', `/contacts/${id}/export`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((response.body as { inboxMessages: unknown[] }).inboxMessages).toHaveLength(1);
    const [{ n }] = await api.db.query<{ n: string }>('SELECT count(*) AS n FROM contacts WHERE id = $1', { bind: [id], type: QueryTypes.SELECT });
    expect(n).toBe('1');
  });
});
