import { QueryTypes } from 'sequelize';
import { loadConfig } from '../../core/config';
import { registerSearchAttributes } from '../../scripts/search-attributes';
import { startTracing, type Tracing } from '../../infra/tracing';
import { connectTemporal, traceWorkflowClients } from '../../temporal/connection';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector } from '../helpers/otlp-collector';
import { expectStatus, until } from '../helpers/polling';
import { createTestWorkspace } from '../helpers/workspaces';

// One transactional email through the real stack (API, dispatcher, workers on the test Temporal server, an
// SMTP sink), its spans read by an OTLP collector stand-in. Tracing is process-wide, so the stack with it off
// runs first and the one with it on after.
jest.setTimeout(120_000);

const SERVER = 2;
const CLIENT = 3;

async function sendOne(stack: EmailStack, to: string, subject: string): Promise<{ workspaceId: string; id: string }> {
  const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { domain: true });
  const body = await expectStatus(call('POST', '/emails', { from: `billing@${domain}`, to, subject, text: 'Your receipt', idempotencyKey: 'tracing-send-1' }), 202);
  const id = String(body.id);
  expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
  return { workspaceId, id };
}

/** The spans of the trace `first` finds a span in, once `complete` says they have all arrived (bounded). */
async function traceOf(tracing: Tracing, collector: OtlpCollector, first: (span: CollectedSpan) => boolean, complete: (trace: CollectedSpan[]) => boolean): Promise<CollectedSpan[]> {
  return until(
    'the trace reaches the collector',
    async () => {
      await tracing.flush();
      const found = collector.spans().find(first);
      const trace = found ? collector.spans().filter((span) => span.traceId === found.traceId) : [];
      return complete(trace) ? trace : [];
    },
    (trace) => trace.length > 0,
    15_000,
  );
}

async function storedTraceparent(stack: EmailStack, id: string): Promise<string | null> {
  const [row] = await stack.api.db.query<{ traceparent: string | null }>('SELECT traceparent FROM messages WHERE id = $1', { bind: [id], type: QueryTypes.SELECT });
  return row.traceparent;
}

describe('tracing off', () => {
  let collector: OtlpCollector;
  beforeAll(async () => {
    collector = await startOtlpCollector();
  });
  afterAll(() => collector.close());

  it('without an endpoint, or with OTEL_SDK_DISABLED, tracing does not start', async () => {
    expect(await startTracing(loadConfig({}), 'test')).toBeNull();
    expect(await startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' }), 'test')).toBeNull();
  });

  it('an email sent end to end sends nothing to the collector and stores no trace context', async () => {
    const stack = await startEmailStack({ overrides: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' } });
    try {
      const { id } = await sendOne(stack, 'off@example.org', 'Receipt off');
      expect(await storedTraceparent(stack, id)).toBeNull();
    } finally {
      await stack.close();
    }
    expect(collector.requests()).toBe(0);
  });
});

describe('tracing on', () => {
  let collector: OtlpCollector;
  let tracing: Tracing;
  let stack: EmailStack;
  beforeAll(async () => {
    collector = await startOtlpCollector();
    const started = await startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'messaging-test' }), 'test');
    if (!started) throw new Error('tracing did not start');
    tracing = started;
    // As api/main.ts and workers/main.ts do once tracing is on; the stack's clients and workers are made after.
    await traceWorkflowClients(true);
    // A workspace with 3 transactional emails waiting sends them in one batch workflow.
    stack = await startEmailStack({ overrides: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, SEND_BATCH_THRESHOLD: '3' } });
    // A transactional batch names its messages in MessageIds, which the shared dev server may lack.
    const client = await connectTemporal(stack.api.config);
    await registerSearchAttributes(client, stack.api.config.TEMPORAL_NAMESPACE);
    await client.connection.close();
  });
  afterAll(async () => {
    await stack.close();
    await traceWorkflowClients(false);
    await tracing.shutdown();
    await collector.close();
  });

  it('one email is one trace: the request, the workflow start, the workflow, the activity and the SMTP call, each the parent of the next', async () => {
    const { id } = await sendOne(stack, 'traced@example.org', 'Receipt 42');
    const traceparent = await storedTraceparent(stack, id);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    // The workflow's own span ends when the workflow does, a moment after the message is recorded sent.
    const isProviderSpan = (span: CollectedSpan) => span.name === 'smtp send' && span.attributes['messaging.message.id'] === id;
    const spans = await traceOf(tracing, collector, isProviderSpan, (trace) => trace.some((span) => span.name.startsWith('RunWorkflow:')));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: CollectedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);

    const provider = spans.find(isProviderSpan) as CollectedSpan;
    expect(provider).toMatchObject({ kind: CLIENT, attributes: { 'messaging.system': 'smtp', 'messaging.channel': 'email' }, service: 'messaging-test' });
    const runActivity = parentOf(provider);
    expect(runActivity?.name).toBe('RunActivity:deliverMessage');
    const startActivity = runActivity && parentOf(runActivity);
    expect(startActivity?.name).toBe('StartActivity:deliverMessage');
    const runWorkflow = startActivity && parentOf(startActivity);
    expect(runWorkflow?.name).toBe('RunWorkflow:sendMessageWorkflow');
    const startWorkflow = runWorkflow && parentOf(runWorkflow);
    expect(startWorkflow?.name).toBe('StartWorkflow:sendMessageWorkflow');
    const request = startWorkflow && parentOf(startWorkflow);
    expect(request).toMatchObject({ name: 'POST /api/v1/emails', kind: SERVER, parentSpanId: null, attributes: { 'http.route': '/api/v1/emails', 'http.response.status_code': 202 } });
    // The row carried the request's context to the dispatcher in the worker.
    expect(traceparent?.split('-')[1]).toBe(request?.traceId);

    // No address, subject or content in any span of the trace.
    const everything = JSON.stringify(spans);
    for (const secret of ['traced@example.org', 'billing@', 'Receipt 42', 'Your receipt']) expect(everything).not.toContain(secret);
  });

  it('a batch of three requests is one workflow whose start links to each request\'s trace, with a provider span per message', async () => {
    const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { domain: true });
    // Held in the outbox until all three are there, so the dispatcher finds a backlog.
    await stack.stopDispatcher();
    const ids: string[] = [];
    try {
      for (const n of [1, 2, 3]) {
        const body = await expectStatus(call('POST', '/emails', { from: `billing@${domain}`, to: `batch-${n}@example.org`, subject: 'Batch', text: 'Hi', idempotencyKey: `tracing-batch-${n}` }), 202);
        ids.push(String(body.id));
      }
    } finally {
      stack.startDispatcher();
    }
    for (const id of ids) expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    const requestTraces = await Promise.all(ids.map(async (id) => (await storedTraceparent(stack, id))?.split('-')[1]));
    expect(new Set(requestTraces).size).toBe(3);

    const spans = await traceOf(
      tracing,
      collector,
      (span) => span.name === 'dispatch send-batch' && span.links.some((link) => link.traceId === requestTraces[0]),
      (trace) => trace.some((span) => span.name === 'RunWorkflow:sendBatchWorkflow'),
    );
    const dispatch = spans.find((span) => span.name === 'dispatch send-batch') as CollectedSpan;
    expect(dispatch.parentSpanId).toBeNull();
    expect(dispatch.links.map((link) => link.traceId).sort()).toEqual([...requestTraces].sort());
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentName = (span: CollectedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId)?.name : undefined);
    const named = (name: string) => spans.filter((span) => span.name === name);
    expect(named('StartWorkflow:sendBatchWorkflow').map(parentName)).toEqual(['dispatch send-batch']);
    expect(named('RunWorkflow:sendBatchWorkflow').map(parentName)).toEqual(['StartWorkflow:sendBatchWorkflow']);
    const providerSpans = named('smtp send');
    expect(providerSpans.map((span) => span.attributes['messaging.message.id']).sort()).toEqual([...ids].sort());
    expect(new Set(providerSpans.map(parentName))).toEqual(new Set(['RunActivity:deliverMessages']));
  });
});
