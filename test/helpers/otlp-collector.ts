import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the collector received it, flattened from OTLP/JSON (ids in hex, as the exporter writes them). */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** null for a root span. */
  parentSpanId: string | null;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  /** The resource's service.name. */
  service: string;
}

export interface OtlpCollector {
  /** The base URL to configure as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter posts to `<it>/v1/traces`). */
  url: string;
  /** Every span received so far, in arrival order. */
  spans: () => CollectedSpan[];
  /** Requests received on any path, whether they parsed or not: a process with tracing off sends none. */
  requests: () => number;
  close: () => Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  links?: Array<{ traceId: string; spanId: string }>;
}
interface ExportTraceServiceRequest {
  resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

function valueOf(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An OTLP/HTTP collector stand-in: accepts `POST /v1/traces` in the JSON encoding the exporter sends
 * (exporter-trace-otlp-http) and keeps the spans. Anything else (another path, protobuf) is counted and
 * refused, so a test sees it rather than losing spans silently.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    bodyOf(request).then((text) => {
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).startsWith('application/json')) {
        response.writeHead(415).end();
        return;
      }
      const payload = JSON.parse(text) as ExportTraceServiceRequest;
      for (const resourceSpans of payload.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
        for (const span of (resourceSpans.scopeSpans ?? []).flatMap((scope) => scope.spans ?? [])) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || null,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
            service,
          });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    }, () => response.writeHead(400).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
