import { randomUUID } from 'node:crypto';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { expectStatus, until } from '../helpers/polling';
import { createTestWorkspace } from '../helpers/workspaces';

// Journey attachments (issue 32): the files a message step names are checked where the user is (create, edit,
// activate: 422 naming the step's field), a step's files stay within the 25 MB a message carries, and a file
// replaced under the same id keeps the journey's version (the spec's Versioning rule 3) while its next
// message carries the new file: on the shipped workers, through the dispatcher to an SMTP sink.
jest.setTimeout(120_000);

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

type Answer = { status: number; body: Record<string, unknown> };
const MB = 1024 * 1024;

/** A workspace with a verified domain and its default sender, and an email template. */
async function workspace() {
  const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  const [listed] = (await expectStatus(call('GET', '/domains'), 200)).domains as Array<{ id: string }>;
  await expectStatus(call('PATCH', `/domains/${listed.id}`, { defaultFromAddress: `hello@${domain}` }), 200);
  const template = (await expectStatus(call('POST', '/templates', { name: `t-${randomUUID()}`, format: 'html', subject: 'Your terms', body: '<p>Attached</p>' }), 201)).id as string;
  const upload = async (filename: string, text: string) =>
    ((await expectStatus(call('POST', '/attachments', { filename, content: Buffer.from(text).toString('base64') }), 201)).attachment as { id: string }).id;
  return { workspaceId, call, template, upload };
}

const journey = (template: string, attachmentIds: string[]) => ({
  name: 'Terms',
  trigger: { event: 'signed_up' },
  graph: {
    entry: 'hello',
    nodes: [{ id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: template }, attachmentIds, next: null }],
  },
});

const fieldErrorsOf = (answer: Answer) => (answer.body.error as { fieldErrors: Record<string, string[]> }).fieldErrors;

/** A ready file of `size` bytes, as far as the checks see it (its row; no bytes are stored). */
async function bigFile(workspaceId: string, size: number): Promise<string> {
  const id = randomUUID();
  await stack.api.db.query(
    `INSERT INTO attachments (id, workspace_id, filename, content_type, size, status, origin, storage_key, ready_at)
     VALUES ($1, $2, 'brochure.pdf', 'application/pdf', $3, 'ready', 'upload', $4, now())`,
    { bind: [id, workspaceId, size, `test/${id}`] },
  );
  return id;
}

describe('the files of a journey step are checked where the user is', () => {
  it("an unknown id, another workspace's file or a pending upload answers 422 at create and at edit, naming the step's field", async () => {
    const { call, template, upload } = await workspace();
    const other = await workspace();
    const theirs = await other.upload('theirs.txt', 'not yours');
    const pending = ((await expectStatus(call('POST', '/attachments', { filename: 'later.pdf', contentType: 'application/pdf', size: 2048 }), 201)).attachment as { id: string }).id;
    const ours = await upload('ours.txt', 'fine');

    const created = (await call('POST', '/automations', journey(template, [ours, randomUUID(), theirs, pending]))) as Answer;
    expect(created.status).toBe(422);
    const fields = fieldErrorsOf(created);
    expect(Object.keys(fields).sort()).toEqual(['graph.nodes[0].attachmentIds[1]', 'graph.nodes[0].attachmentIds[2]', 'graph.nodes[0].attachmentIds[3]']);
    expect(fields['graph.nodes[0].attachmentIds[2]'][0]).toContain(`no attachment ${theirs} in the workspace`);
    expect(fields['graph.nodes[0].attachmentIds[3]'][0]).toContain('not uploaded yet');

    const draft = await expectStatus(call('POST', '/automations', journey(template, [ours])), 201);
    const edited = (await call('PATCH', `/automations/${draft.id as string}`, { graph: journey(template, [pending]).graph })) as Answer;
    expect(edited.status).toBe(422);
    expect(Object.keys(fieldErrorsOf(edited))).toEqual(['graph.nodes[0].attachmentIds[0]']);
  });

  it("a step whose files total over 25 MB answers 422 naming its attachmentIds; 25 MB exactly is accepted", async () => {
    const { workspaceId, call, template } = await workspace();
    const files = [await bigFile(workspaceId, 10 * MB), await bigFile(workspaceId, 10 * MB), await bigFile(workspaceId, 5 * MB)];
    await expectStatus(call('POST', '/automations', journey(template, files)), 201);
    const over = (await call('POST', '/automations', journey(template, [...files, await bigFile(workspaceId, 1)]))) as Answer;
    expect(over.status).toBe(422);
    expect(fieldErrorsOf(over)).toEqual({ 'graph.nodes[0].attachmentIds': [expect.stringContaining('total 26214401 bytes')] });
  });
});

describe('replacing a file under the same id', () => {
  it("PUT /attachments/:id swaps the file; the journey keeps its version and its next message carries the new file", async () => {
    const { call, template, upload } = await workspace();
    const fileId = await upload('terms.txt', 'TERMS-V1');
    const automation = await expectStatus(call('POST', '/automations', journey(template, [fileId])), 201);
    const automationId = automation.id as string;
    expect(await expectStatus(call('POST', `/automations/${automationId}/activate`), 200)).toMatchObject({ version: 1 });

    const replaced = await expectStatus(call('PUT', `/attachments/${fileId}`, { filename: 'terms-2027.txt', content: Buffer.from('TERMS-V2, longer').toString('base64') }), 200);
    expect(replaced.attachment).toMatchObject({ id: fileId, filename: 'terms-2027.txt', contentType: 'text/plain', size: 16, status: 'ready' });
    const download = await expectStatus(call('GET', `/attachments/${fileId}`), 200);
    expect(await (await fetch(download.downloadUrl as string)).text()).toBe('TERMS-V2, longer');

    // No new version: the published graph names the file by id, and activating again publishes nothing.
    expect(await expectStatus(call('GET', `/automations/${automationId}`), 200)).toMatchObject({ version: 1 });
    expect(await expectStatus(call('POST', `/automations/${automationId}/activate`), 200)).toMatchObject({ version: 1 });

    const contact = await expectStatus(call('POST', '/contacts', { identities: [{ channel: 'email', address: 'tess@example.org', consent: 'opted_in' }] }), 201);
    await expectStatus(call('POST', '/events', { event: 'signed_up', contactId: contact.id }), 202);
    const mail = await until(
      'the journey mail reaches the sink',
      () => Promise.resolve(stack.sink.received.find((received) => received.recipients.includes('tess@example.org'))),
      (found) => found !== undefined,
      60_000,
    );
    if (!mail) throw new Error('unreachable');
    expect(mail.raw).toContain('terms-2027.txt');
    expect(mail.raw).toContain(Buffer.from('TERMS-V2, longer').toString('base64'));
    expect(mail.raw).not.toContain(Buffer.from('TERMS-V1').toString('base64'));
  });

  it('a replacement that would carry a live journey message over 25 MB answers 422 naming content; a draft is checked at activation', async () => {
    const { workspaceId, call, template, upload } = await workspace();
    const big = [await bigFile(workspaceId, 10 * MB), await bigFile(workspaceId, 10 * MB)];
    const live = await upload('small.txt', 'small');
    const drafted = await upload('other.txt', 'other');
    const liveId = (await expectStatus(call('POST', '/automations', journey(template, [...big, live])), 201)).id as string;
    await expectStatus(call('POST', `/automations/${liveId}/activate`), 200);
    const draftId = (await expectStatus(call('POST', '/automations', journey(template, [...big, drafted])), 201)).id as string;

    const sixMegabytes = Buffer.alloc(6 * MB, 'a').toString('base64');
    const refused = (await call('PUT', `/attachments/${live}`, { content: sixMegabytes })) as Answer;
    expect(refused.status).toBe(422);
    expect(fieldErrorsOf(refused).content[0]).toContain(`automation "Terms" (${liveId})`);
    expect((await expectStatus(call('GET', `/attachments/${live}`), 200)).attachment).toMatchObject({ filename: 'small.txt', size: 5 });

    await expectStatus(call('PUT', `/attachments/${drafted}`, { content: sixMegabytes }), 200);
    const activation = (await call('POST', `/automations/${draftId}/activate`)) as Answer;
    expect(activation.status).toBe(422);
    expect(Object.keys(fieldErrorsOf(activation))).toEqual(['graph.nodes[0].attachmentIds']);
  });

  it('a signed replacement keeps the current file in use until its upload is confirmed; a journey then sends the new one, in the same version', async () => {
    const { call, template, upload } = await workspace();
    const fileId = await upload('terms.txt', 'TERMS-V1');
    const automationId = (await expectStatus(call('POST', '/automations', journey(template, [fileId])), 201)).id as string;
    await expectStatus(call('POST', `/automations/${automationId}/activate`), 200);
    const download = async () => (await fetch((await expectStatus(call('GET', `/attachments/${fileId}`), 200)).downloadUrl as string)).text();

    const bytes = Buffer.from('TERMS-V3 signed');
    const started = await expectStatus(call('PUT', `/attachments/${fileId}`, { filename: 'terms-v3.txt', contentType: 'text/plain', size: bytes.length }), 200);
    expect(started).toMatchObject({ attachment: { id: fileId, filename: 'terms.txt', size: 8, status: 'ready' }, uploadUrl: expect.any(String), expiresIn: 900 });
    expect(await download()).toBe('TERMS-V1');
    const early = (await call('POST', `/attachments/${fileId}/confirm`)) as Answer;
    expect(early).toMatchObject({ status: 422, body: { error: 'attachment_rejected', reason: 'not_uploaded' } });
    expect(await download()).toBe('TERMS-V1');

    const put = await fetch(started.uploadUrl as string, { method: 'PUT', body: bytes, headers: { 'content-type': 'text/plain', 'content-length': String(bytes.length) } });
    expect(put.status).toBe(200);
    expect(await expectStatus(call('POST', `/attachments/${fileId}/confirm`), 200)).toMatchObject({ attachment: { id: fileId, filename: 'terms-v3.txt', size: bytes.length, status: 'ready' } });
    expect(await download()).toBe('TERMS-V3 signed');
    expect(await expectStatus(call('GET', `/automations/${automationId}`), 200)).toMatchObject({ version: 1 });

    const contact = await expectStatus(call('POST', '/contacts', { identities: [{ channel: 'email', address: 'vic@example.org', consent: 'opted_in' }] }), 201);
    await expectStatus(call('POST', '/events', { event: 'signed_up', contactId: contact.id }), 202);
    const mail = await until(
      'the journey mail reaches the sink',
      () => Promise.resolve(stack.sink.received.find((received) => received.recipients.includes('vic@example.org'))),
      (found) => found !== undefined,
      60_000,
    );
    expect(mail?.raw).toContain('terms-v3.txt');
    expect(mail?.raw).toContain(bytes.toString('base64'));
  });

  it("another workspace's or a deleted attachment answers 404; an executable name 422; a file stored from a send 409", async () => {
    const { call, upload } = await workspace();
    const other = await workspace();
    const theirs = await other.upload('theirs.txt', 'x');
    expect((await call('PUT', `/attachments/${theirs}`, { content: Buffer.from('y').toString('base64') })).status).toBe(404);
    const mine = await upload('mine.txt', 'x');
    expect((await call('PUT', `/attachments/${mine}`, { filename: 'setup.exe', content: Buffer.from('y').toString('base64') })).status).toBe(422);
    await expectStatus(call('DELETE', `/attachments/${mine}`), 200);
    expect((await call('PUT', `/attachments/${mine}`, { content: Buffer.from('y').toString('base64') })).status).toBe(404);

    const { workspaceId } = other;
    const fromSend = randomUUID();
    await stack.api.db.query(
      `INSERT INTO attachments (id, workspace_id, filename, content_type, size, status, origin, storage_key, ready_at)
       VALUES ($1, $2, 'invoice.pdf', 'application/pdf', 10, 'ready', 'send', $3, now())`,
      { bind: [fromSend, workspaceId, `test/${fromSend}`] },
    );
    expect(await other.call('PUT', `/attachments/${fromSend}`, { content: Buffer.from('y').toString('base64') })).toMatchObject({ status: 409, body: { error: 'conflict' } });
  });
});
