import { Writable } from 'node:stream';
import { pino } from 'pino';
import { logRedaction, REDACTED } from '../../core/log-redaction';

/** Logs one object through pino with the service's redaction and returns the line as parsed JSON. */
function logged(object: Record<string, unknown>): Record<string, unknown> {
  let line = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      line += chunk.toString();
      done();
    },
  });
  pino({ redact: logRedaction }, stream).info(object, 'line');
  return JSON.parse(line) as Record<string, unknown>;
}

describe('log redaction', () => {
  it('credential headers are censored; ordinary headers stay readable', () => {
    const line = logged({
      req: {
        headers: {
          authorization: 'Bearer sk_1',
          cookie: 'session=1',
          'x-twilio-signature': 'sig',
          'x-telegram-bot-api-secret-token': 'tok',
          'x-api-key': 'k',
          host: 'api.example.com',
          'content-type': 'application/json',
        },
      },
      res: { headers: { 'set-cookie': 'session=2', 'x-request-id': 'r-1' } },
    });
    expect(line.req).toEqual({
      headers: {
        authorization: REDACTED,
        cookie: REDACTED,
        'x-twilio-signature': REDACTED,
        'x-telegram-bot-api-secret-token': REDACTED,
        'x-api-key': REDACTED,
        host: 'api.example.com',
        'content-type': 'application/json',
      },
    });
    expect(line.res).toEqual({ headers: { 'set-cookie': REDACTED, 'x-request-id': 'r-1' } });
  });

  it('secret fields of a logged body or input are censored, and base64 attachment contents with them', () => {
    const line = logged({
      body: { apiKey: 'sk_1', name: 'ci', attachments: [{ filename: 'a.pdf', content: 'QUJD' }], emails: [{ attachments: [{ content: 'REVG' }] }] },
      input: { botToken: '123:abc', authToken: 't', password: 'p', secret: 'whsec_1', chatId: 42 },
      token: 'top-level',
    });
    expect(line.body).toEqual({
      apiKey: REDACTED,
      name: 'ci',
      attachments: [{ filename: 'a.pdf', content: REDACTED }],
      emails: [{ attachments: [{ content: REDACTED }] }],
    });
    expect(line.input).toEqual({ botToken: REDACTED, authToken: REDACTED, password: REDACTED, secret: REDACTED, chatId: 42 });
    expect(line.token).toBe(REDACTED);
  });

  it('a database error keeps its message and code but not its statement, bind values, conflicting values or rows', () => {
    const driver = Object.assign(new Error('duplicate key value violates unique constraint "contacts_email"'), {
      code: '23505',
      detail: 'Key (email)=(ann@example.org) already exists.',
      sql: 'INSERT INTO contacts (email) VALUES ($1)',
      parameters: ['ann@example.org'],
    });
    const err = Object.assign(new Error('Validation error'), {
      name: 'SequelizeUniqueConstraintError',
      original: driver,
      parent: driver,
      sql: driver.sql,
      parameters: driver.parameters,
      fields: { email: 'ann@example.org' },
      errors: [{ message: 'email must be unique', value: 'ann@example.org', instance: { email: 'ann@example.org' } }],
    });
    const text = JSON.stringify(logged({ err }));
    expect(text).not.toContain('ann@example.org');
    expect(text).not.toContain('INSERT INTO');
    expect(text).toContain('duplicate key value violates unique constraint');
    expect(text).toContain('"code":"23505"');
    expect(text).toContain('email must be unique');
  });

  it('an unsubscribe link loses its token in the request log; other URLs stay as they are', () => {
    const line = logged({ req: { url: '/unsubscribe/AQIDBAUG-_x?utm=1', params: { token: 'AQIDBAUG-_x' } } });
    expect(line.req).toEqual({ url: `/unsubscribe/${REDACTED}?utm=1`, params: { token: REDACTED } });
    expect((logged({ req: { url: '/api/v1/emails/unsubscribe/42?limit=5' } }).req as { url: string }).url).toBe('/api/v1/emails/unsubscribe/42?limit=5');
  });
});
