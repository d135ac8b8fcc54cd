import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configKeyring, loadConfig } from '../../core/config';
import { macKeys } from '../../core/secrets';

const ownKey = randomBytes(32).toString('base64');

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

  it("TRUST_PROXY takes Express's forms: off by default, true, a hop count, or addresses", () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).TRUST_PROXY).toBe('loopback, 10.0.0.0/8');
  });

  it('production does not migrate on start unless asked', () => {
    expect(loadConfig({ NODE_ENV: 'production', MASTER_KEY: ownKey }).MIGRATE_ON_START).toBe(false);
  });

  it('production refuses to start without its own master key; development has a public one', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/MASTER_KEY/);
    expect(loadConfig({}).MASTER_KEY.length).toBeGreaterThanOrEqual(32);
  });

  it('a master key that is not 32 bytes of base64 or hex stops the start, naming MASTER_KEY', () => {
    for (const bad of ['k'.repeat(44), 'change-me-to-32-random-bytes-in-base64-please', randomBytes(31).toString('base64'), randomBytes(33).toString('hex'), `${ownKey.slice(0, 40)} ${ownKey.slice(41)}`]) {
      expect(() => loadConfig({ MASTER_KEY: bad })).toThrow(/MASTER_KEY: must be 32 bytes/);
    }
  });

  it('a master key of 32 bytes is taken as base64, unpadded base64 or hex', () => {
    const bytes = randomBytes(32);
    for (const good of [bytes.toString('base64'), bytes.toString('base64').replace(/=$/, ''), bytes.toString('hex')]) {
      expect(loadConfig({ NODE_ENV: 'production', MASTER_KEY: good }).MASTER_KEY).toBe(good);
    }
  });

  it('production refuses the public development key, in any spelling; development and test accept it', () => {
    const development = loadConfig({}).MASTER_KEY;
    const asHex = Buffer.from(development, 'base64').toString('hex');
    for (const spelling of [development, asHex]) {
      expect(() => loadConfig({ NODE_ENV: 'production', MASTER_KEY: spelling })).toThrow(/MASTER_KEY: the public development key is refused/);
    }
    expect(loadConfig({ NODE_ENV: 'test', MASTER_KEY: development }).MASTER_KEY).toBe(development);
  });

  it('production refuses every master key committed to this repository, in any spelling', () => {
    const composeSample = 'pdgyzM41QqXlErz4iPAmr28/Mb1p9WxVartQRSJiKtU=';
    const testKey = Buffer.alloc(32, 7).toString('base64');
    for (const key of [composeSample, Buffer.from(composeSample, 'base64').toString('hex'), testKey, testKey.replace(/=$/, '')]) {
      expect(() => loadConfig({ NODE_ENV: 'production', MASTER_KEY: key })).toThrow(/MASTER_KEY: a key published in this repository is refused in production/);
    }
    expect(loadConfig({ NODE_ENV: 'development', MASTER_KEY: composeSample }).MASTER_KEY).toBe(composeSample);
  });

  it('the docker-compose file commits no master key and stops without one, saying how to make it', () => {
    const compose = readFileSync(resolve(__dirname, '../../docker-compose.yml'), 'utf8');
    expect(compose).not.toMatch(/[A-Za-z0-9+/]{43}=|[0-9a-f]{64}/i);
    expect(compose).toMatch(/MASTER_KEY: '\$\{MASTER_KEY:\?[^}]*openssl rand -base64 32[^}]*\}'/);
  });

  it('the docker-compose file publishes Temporal, the stand-ins and the mail catcher on loopback only', () => {
    const compose = readFileSync(resolve(__dirname, '../../docker-compose.yml'), 'utf8');
    const published = [...compose.matchAll(/ports: \[([^\]]*)\]/g)].flatMap((match) => match[1].split(',').map((port) => port.trim().replace(/"/g, '')));
    const open = published.filter((port) => !port.startsWith('127.0.0.1:'));
    // Only the API and the inbound SMTP listener are meant to be reached from outside.
    expect(open.sort()).toEqual(['2525:2525', '3000:3000']);
  });

  it('MASTER_KEY_PREVIOUS takes a comma-separated list of keys and names a malformed one', () => {
    const [a, b] = [randomBytes(32).toString('base64'), randomBytes(32).toString('hex')];
    expect(loadConfig({ MASTER_KEY_PREVIOUS: ` ${a}, ${b} ` }).MASTER_KEY_PREVIOUS).toEqual([a, b]);
    expect(loadConfig({}).MASTER_KEY_PREVIOUS).toEqual([]);
    expect(() => loadConfig({ MASTER_KEY_PREVIOUS: `${a},not-a-key` })).toThrow(/MASTER_KEY_PREVIOUS: each key must be 32 bytes/);
  });

  it('the keyring seals with MASTER_KEY; a published previous key opens but verifies no link', () => {
    const current = randomBytes(32);
    const previous = randomBytes(32);
    const composeSample = 'pdgyzM41QqXlErz4iPAmr28/Mb1p9WxVartQRSJiKtU=';
    const config = loadConfig({ NODE_ENV: 'production', MASTER_KEY: current.toString('base64'), MASTER_KEY_PREVIOUS: `${previous.toString('hex')},${composeSample}` });
    const ring = configKeyring(config);
    expect(ring.current.key).toEqual(current);
    expect(ring.previous.map((key) => key.published)).toEqual([false, true]);
    expect(macKeys(ring)).toEqual([current, previous]);
  });

  it.each(['WEBHOOKS_ALLOW_PRIVATE_TARGETS', 'ANALYTICS_ALLOW_PRIVATE_TARGETS', 'URL_FETCH_ALLOW_PRIVATE_TARGETS'])('%s is refused in production, allowed in development and test', (name) => {
    expect(() => loadConfig({ NODE_ENV: 'production', MASTER_KEY: ownKey, [name]: 'true' })).toThrow(new RegExp(`${name}: refused in production`));
    expect(loadConfig({ NODE_ENV: 'production', MASTER_KEY: ownKey, [name]: 'false' })[name as 'WEBHOOKS_ALLOW_PRIVATE_TARGETS']).toBe(false);
    for (const NODE_ENV of ['development', 'test']) expect(loadConfig({ NODE_ENV, [name]: 'true' })[name as 'WEBHOOKS_ALLOW_PRIVATE_TARGETS']).toBe(true);
  });

  it('each private-targets switch opens only its own feature: the webhooks one leaves the analytics connector and URL fetches closed', () => {
    const config = loadConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    expect([config.WEBHOOKS_ALLOW_PRIVATE_TARGETS, config.ANALYTICS_ALLOW_PRIVATE_TARGETS, config.URL_FETCH_ALLOW_PRIVATE_TARGETS]).toEqual([true, false, false]);
  });

  it('an operator token shorter than 16 characters is refused', () => {
    expect(() => loadConfig({ OPS_TOKEN: 'letmein' })).toThrow(/OPS_TOKEN: must be at least 16 characters/);
    expect(loadConfig({ OPS_TOKEN: 'a'.repeat(16) }).OPS_TOKEN).toBe('a'.repeat(16));
  });

  it('reads the DNS servers as a list', () => {
    expect(loadConfig({ DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2:53' }).DNS_SERVERS).toEqual(['127.0.0.1:5353', '10.0.0.2:53']);
    expect(loadConfig({}).DNS_SERVERS).toEqual([]);
  });

  it('the Telegram Bot API root defaults to Telegram and keeps the path of a self-hosted root', () => {
    expect(loadConfig({}).TELEGRAM_API_URL).toBe('https://api.telegram.org/');
    expect(loadConfig({ TELEGRAM_API_URL: 'http://127.0.0.1:8081/telegram' }).TELEGRAM_API_URL).toBe('http://127.0.0.1:8081/telegram/');
    expect(() => loadConfig({ TELEGRAM_API_URL: 'not a url' })).toThrow(/TELEGRAM_API_URL/);
  });

  it('names every invalid variable in one error', () => {
    expect(() => loadConfig({ PORT: 'x', PUBLIC_BASE_URL: 'not a url' })).toThrow(/PORT[\s\S]*PUBLIC_BASE_URL/);
  });

  it.each(['development', 'test', 'production'])('SES without SNS_TOPIC_ARNS is refused in %s, with a message that says what to set', (NODE_ENV) => {
    const env = { NODE_ENV, MASTER_KEY: ownKey, EMAIL_PROVIDER: 'ses' };
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
  it('the inbound listener binds to loopback with a 40 MB limit unless told otherwise', () => {
    const config = loadConfig({});
    expect([config.INBOUND_SMTP_HOST, config.INBOUND_MAX_MESSAGE_BYTES, config.INBOUND_TLS_CERT_PATH]).toEqual(['127.0.0.1', 40 * 1024 * 1024, undefined]);
    expect(loadConfig({ INBOUND_SMTP_HOST: '0.0.0.0', INBOUND_MAX_MESSAGE_BYTES: '1000' })).toMatchObject({ INBOUND_SMTP_HOST: '0.0.0.0', INBOUND_MAX_MESSAGE_BYTES: 1000 });
  });

  it('an inbound TLS certificate without its key (or the reverse) is refused; both together are taken', () => {
    expect(() => loadConfig({ INBOUND_TLS_CERT_PATH: '/etc/mx/cert.pem' })).toThrow(/INBOUND_TLS_CERT_PATH and INBOUND_TLS_KEY_PATH go together/);
    expect(() => loadConfig({ INBOUND_TLS_KEY_PATH: '/etc/mx/key.pem' })).toThrow(/go together/);
    expect(loadConfig({ INBOUND_TLS_CERT_PATH: '/c.pem', INBOUND_TLS_KEY_PATH: '/k.pem' })).toMatchObject({ INBOUND_TLS_CERT_PATH: '/c.pem', INBOUND_TLS_KEY_PATH: '/k.pem' });
  });
});
