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
    expect(loadConfig({ NODE_ENV: 'production', MASTER_KEY: 'k'.repeat(44) }).MIGRATE_ON_START).toBe(false);
  });

  it('production refuses to start without its own master key; development has a public one', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/MASTER_KEY/);
    expect(loadConfig({}).MASTER_KEY.length).toBeGreaterThanOrEqual(32);
  });

  it('reads the DNS servers as a list', () => {
    expect(loadConfig({ DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2:53' }).DNS_SERVERS).toEqual(['127.0.0.1:5353', '10.0.0.2:53']);
    expect(loadConfig({}).DNS_SERVERS).toEqual([]);
  });

  it('names every invalid variable in one error', () => {
    expect(() => loadConfig({ PORT: 'x', PUBLIC_BASE_URL: 'not a url' })).toThrow(/PORT[\s\S]*PUBLIC_BASE_URL/);
  });

  it.each(['development', 'test', 'production'])('SES without SNS_TOPIC_ARNS is refused in %s, with a message that says what to set', (NODE_ENV) => {
    const env = { NODE_ENV, MASTER_KEY: 'k'.repeat(44), EMAIL_PROVIDER: 'ses' };
    expect(() => loadConfig(env)).toThrow(/SNS_TOPIC_ARNS: required when EMAIL_PROVIDER=ses/);
    expect(() => loadConfig({ ...env, SNS_TOPIC_ARNS: ' , ' })).toThrow(/SNS_TOPIC_ARNS: required when EMAIL_PROVIDER=ses/);
    expect(loadConfig({ ...env, SNS_TOPIC_ARNS: 'arn:aws:sns:eu-west-1:123456789012:ses-events' }).SNS_TOPIC_ARNS).toEqual([
      'arn:aws:sns:eu-west-1:123456789012:ses-events',
    ]);
  });

  it('SMTP needs no topic; the missing topics are named beside other invalid variables', () => {
    expect(loadConfig({ EMAIL_PROVIDER: 'smtp' }).SNS_TOPIC_ARNS).toEqual([]);
    expect(() => loadConfig({ EMAIL_PROVIDER: 'ses', PORT: 'x' })).toThrow(/PORT[\s\S]*SNS_TOPIC_ARNS/);
  });
});
