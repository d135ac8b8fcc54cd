import { loadConfig } from '../../core/config';
import { temporalConnectionOptions } from '../../temporal/connection';

describe('how every process connects to Temporal', () => {
  it('by default it speaks plain gRPC to TEMPORAL_ADDRESS, as the dev server does, and sends no key', () => {
    expect(temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: '127.0.0.1:7233' }))).toEqual({ address: '127.0.0.1:7233' });
  });

  it('an API key turns TLS on by itself: the key never travels in the clear', () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'key-1' });
    expect(temporalConnectionOptions(config)).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: true, apiKey: 'key-1' });
  });

  it('TEMPORAL_TLS=true alone is TLS without a key (a self-hosted cluster behind TLS)', () => {
    expect(temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_TLS: 'true' }))).toEqual({
      address: 'temporal.internal:7233',
      tls: true,
    });
  });
});
