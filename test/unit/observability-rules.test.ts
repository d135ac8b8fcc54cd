import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { parse } from 'yaml';
import { PacerFallback } from '../../activities/pacer-fallback';
import { createSendObserver } from '../../activities/send-observer';
import '../../activities/webhook-metrics';
import { createHttpMetrics } from '../../api/http/metrics';
import '../../services/acceptance/metrics';
import '../../services/metrics/sends';
import { createBreakerGauge } from '../../workers/dispatcher';
import '../../workers/inbox/refusal-metrics';
import { registerMemoryMetrics } from '../../workers/memory-diagnostics';
import { createOutboxGauges } from '../../workers/outbox-gauges';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Every metric the processes export, built as each process builds its registry. */
async function definedMetricNames(): Promise<Set<string>> {
  const worker = new Registry();
  collectDefaultMetrics({ register: worker });
  createSendObserver(pino({ level: 'silent' }), worker);
  new PacerFallback({ probe: async () => undefined, liveWorkers: async () => 1, logger: pino({ level: 'silent' }), metrics: worker });
  createBreakerGauge(worker);
  createOutboxGauges(worker);
  registerMemoryMetrics(worker, []);
  // The API's registry carries the service's own metrics (services/metrics/registry.ts) beside its own.
  const apiProcess = new Registry();
  collectDefaultMetrics({ register: apiProcess });
  const api = createHttpMetrics(apiProcess).registry;
  const names = new Set(['up']);
  for (const registry of [worker, api]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
      if (String(metric.type) === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${metric.name}${suffix}`);
    }
  }
  return names;
}

/** PromQL's words that are not metric names: functions, aggregations, operators. */
const PROMQL_WORDS = new Set([
  'sum', 'max', 'min', 'avg', 'count', 'topk', 'bottomk', 'rate', 'irate', 'increase', 'histogram_quantile', 'and', 'or', 'unless', 'bool',
  'offset', 'absent', 'clamp_min', 'clamp_max', 'label_replace', 'vector', 'scalar', 'time', 'delta', 'deriv', 'abs',
]);

/** The metric names a PromQL expression reads: what is left once strings, matchers, ranges and groupings are gone. */
export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+\w+/g, ' ');
  return [...bare.matchAll(/(?<![\w.$])[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map(([word]) => word).filter((word) => !PROMQL_WORDS.has(word));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface Panel {
  type: string;
  title: string;
  description?: string;
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string }>;
}

const docs = read('docs/observability.md');
const anchors = new Set(docs.split('\n').filter((line) => /^#{1,6} /.test(line)).map((line) => anchorOf(line.replace(/^#+ /, ''))));
const rules = (parse(read('ops/prometheus/alerts.yml')) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(read('ops/grafana/messaging-dashboard.json')) as {
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: string }> };
};
const panels = dashboard.panels.filter((panel) => panel.type !== 'row');

describe('the metric names PromQL reads', () => {
  it('strips functions, label matchers, ranges, groupings and strings, leaving the metrics', () => {
    expect(metricNamesOf('sum by (le, provider) (rate(a_seconds_bucket{status=~"5..", x="y z"}[$__rate_interval])) / sum(rate(b_total[5m] offset 1d)) > 0.5 and up{job="x"} == 0'))
      .toEqual(['a_seconds_bucket', 'b_total', 'up']);
  });
});

describe('alert rules (ops/prometheus/alerts.yml)', () => {
  it('covers what operators are paged for', () => {
    const names = rules.map((rule) => rule.alert);
    for (const alert of ['MessagingTransactionalOutboxStale', 'MessagingSendFailureRatioHigh', 'MessagingProviderBreakerOpen', 'MessagingProviderLatencyHigh',
      'MessagingAmbiguousSends', 'MessagingWebhookFailureRatioHigh', 'MessagingInboundRefusalsSpike', 'MessagingApi5xxRatioHigh', 'MessagingWorkerDown']) {
      expect(names).toContain(alert);
    }
  });

  it('reads only metrics the service defines, so a renamed metric fails here', async () => {
    const defined = await definedMetricNames();
    const unknown = rules.flatMap((rule) => metricNamesOf(rule.expr).filter((name) => !defined.has(name)).map((name) => `${rule.alert}: ${name}`));
    expect(unknown).toEqual([]);
  });

  it('each alert has a for: duration, a severity and a runbook section that exists in docs/observability.md', () => {
    for (const rule of rules) {
      expect(rule).toMatchObject({ alert: expect.stringMatching(/^Messaging/), for: expect.stringMatching(/^\d+[smh]$/) });
      expect(['critical', 'warning']).toContain(rule.labels?.severity);
      const runbook = rule.annotations?.runbook ?? '';
      expect(runbook).toMatch(/^docs\/observability\.md#/);
      expect({ alert: rule.alert, anchorFound: anchors.has(runbook.split('#')[1]) }).toEqual({ alert: rule.alert, anchorFound: true });
    }
  });
});

describe('the Grafana dashboard (ops/grafana/messaging-dashboard.json)', () => {
  it('is a Grafana 10/11 dashboard with a Prometheus datasource variable every panel uses', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.schemaVersion).toBeLessThanOrEqual(41);
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    for (const panel of panels) expect({ title: panel.title, datasource: panel.datasource }).toEqual({ title: panel.title, datasource: { type: 'prometheus', uid: '${datasource}' } });
  });

  it('has one row per concern, in order', () => {
    expect(dashboard.panels.filter((panel) => panel.type === 'row').map((panel) => panel.title))
      .toEqual(['API', 'Acceptance', 'Delivery', 'Outbox', 'Providers', 'Webhooks', 'Inbound', 'Process']);
  });

  it('reads only metrics the service defines', async () => {
    const defined = await definedMetricNames();
    const exprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
    expect(exprs.length).toBeGreaterThan(panels.length - 1);
    const unknown = exprs.flatMap(({ panel, expr }) => metricNamesOf(expr).filter((name) => !defined.has(name)).map((name) => `${panel}: ${name}`));
    expect(unknown).toEqual([]);
  });

  it('has every panel described in docs/observability.md under its own title', () => {
    const missing = panels.filter((panel) => !anchors.has(anchorOf(panel.title))).map((panel) => panel.title);
    expect(missing).toEqual([]);
  });
});
