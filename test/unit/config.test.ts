import { loadConfig } from '../../core/config';

describe('configuration', () => {
  it('has defaults that match the local stack', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      RATE_LIMIT_PER_SECOND: 10,
      SEND_RATE_PER_SECOND: 14,
      MIGRATE_ON_START: true,
    });
  });

  it('coerces numbers and booleans and treats empty strings as unset', () => {
    const config = loadConfig({ PORT: '8080', MIGRATE_ON_START: 'false', REDIS_URL: '' });
    expect(config.PORT).toBe(8080);
    expect(config.MIGRATE_ON_START).toBe(false);
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:56379/0');
  });

  it('production does not migrate on start unless asked', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).MIGRATE_ON_START).toBe(false);
  });

  it('names every invalid variable in one error', () => {
    expect(() => loadConfig({ PORT: 'x', PUBLIC_BASE_URL: 'not a url' })).toThrow(/PORT[\s\S]*PUBLIC_BASE_URL/);
  });
});
