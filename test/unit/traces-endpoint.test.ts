import { loadConfig, tracesEndpoint } from '../../core/config';

// The one switch of tracing (docs/observability.md, Traces): the standard OTEL_* variables, off by default.
describe('where traces go', () => {
  it('nowhere by default: tracing is off', () => {
    expect(tracesEndpoint(loadConfig({}))).toBeNull();
  });

  it('the base endpoint gets /v1/traces appended, a trailing slash or not', () => {
    expect(tracesEndpoint(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }))).toBe('http://collector:4318/v1/traces');
    expect(tracesEndpoint(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }))).toBe('http://collector:4318/v1/traces');
  });

  it('the traces endpoint is used as given and wins over the base', () => {
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp' });
    expect(tracesEndpoint(config)).toBe('https://traces.example.com/otlp');
  });

  it('OTEL_SDK_DISABLED=true keeps it off even with an endpoint', () => {
    expect(tracesEndpoint(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }))).toBeNull();
  });

  it('an endpoint that is not a URL is refused at start', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'the collector' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});
