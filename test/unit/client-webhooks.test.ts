import { verifyWebhook, WEBHOOK_EVENT_TYPES, WebhookVerificationError } from '../../packages/client/src';
import { WEBHOOK_EVENTS } from '../../core/webhook-events';
import { generateWebhookSecret, webhookHeaders } from '../../core/webhook-signing';

/** A request signed as the service signs its deliveries (core/webhook-signing.ts). */
function delivery(secrets: string[], body: string, at = new Date()) {
  return { body, headers: { ...webhookHeaders(secrets, 'd6a6f8e2-0d8e-4c4e-8a51-0b5f1f3c9e10', at, body) } };
}

const body = JSON.stringify({ type: 'email.delivered', createdAt: '2026-01-01T00:00:00.000Z', data: { emailId: 'e1', kind: 'transactional', channel: 'email', to: ['ann@example.org'], recipients: ['ann@example.org'] } });

describe('verifyWebhook', () => {
  it("the client's event list is the service's", () => {
    expect([...WEBHOOK_EVENT_TYPES]).toEqual([...WEBHOOK_EVENTS]);
  });

  it('a delivery signed with the whsec_ secret the service hands out verifies, from a string, bytes or fetch Headers', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_/);
    const signed = delivery([secret], body);
    const event = verifyWebhook({ secret, payload: signed.body, headers: signed.headers });
    expect(event).toMatchObject({ type: 'email.delivered', data: { emailId: 'e1', recipients: ['ann@example.org'] } });
    expect(verifyWebhook({ secret: `${secret}\n`, payload: Buffer.from(signed.body), headers: new Headers(signed.headers) }).type).toBe('email.delivered');
    const upperCase = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toUpperCase(), [value]]));
    expect(verifyWebhook({ secret, payload: new TextEncoder().encode(signed.body), headers: upperCase }).type).toBe('email.delivered');
  });

  it('during a rotation either secret verifies the request', () => {
    const [next, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const signed = delivery([next, previous], body);
    expect(verifyWebhook({ secret: previous, payload: signed.body, headers: signed.headers }).type).toBe('email.delivered');
    expect(verifyWebhook({ secret: next, payload: signed.body, headers: signed.headers }).type).toBe('email.delivered');
  });

  it('a tampered body, a wrong secret, a missing header or a replay over 5 minutes old is refused', () => {
    const secret = generateWebhookSecret();
    const signed = delivery([secret], body);
    const refused = (input: Parameters<typeof verifyWebhook>[0]) => expect(() => verifyWebhook(input)).toThrow(WebhookVerificationError);
    refused({ secret, payload: signed.body.replace('e1', 'e2'), headers: signed.headers });
    refused({ secret: generateWebhookSecret(), payload: signed.body, headers: signed.headers });
    refused({ secret, payload: signed.body, headers: { ...signed.headers, 'webhook-signature': undefined } });
    const old = delivery([secret], body, new Date(Date.now() - 6 * 60_000));
    refused({ secret, payload: old.body, headers: old.headers });
  });

  it('a signed body that is not an event is refused, and a parsed object is a usage error', () => {
    const secret = generateWebhookSecret();
    const signed = delivery([secret], '{"hello":"world"}');
    expect(() => verifyWebhook({ secret, payload: signed.body, headers: signed.headers })).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook({ secret, payload: JSON.parse(body) as string, headers: signed.headers })).toThrow(/raw body/);
  });
});
