import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { generateWebhookSecret, webhookHeaders } from '../../core/webhook-signing';

/**
 * Our signatures against the official Standard Webhooks library (npm `standardwebhooks`), never against
 * our own code: what a receiver following the standard accepts is what we must send.
 */
describe('webhook signing (Standard Webhooks 1.0)', () => {
  const body = JSON.stringify({ type: 'email.sent', createdAt: '2025-01-01T00:00:00.000Z', data: { emailId: 'e1' } });
  const id = '7d2c9b43-5f6a-4e1b-9c3d-2a1b0c9d8e7f';

  it('a new secret is whsec_ and base64 of at least 24 random bytes, different each time', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('a signed request verifies with the official library, which hands back the payload', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([secret], id, new Date(), body);
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('a tampered body, a stale timestamp and a wrong secret each fail verification', () => {
    const secret = generateWebhookSecret();
    const headers = { ...webhookHeaders([secret], id, new Date(), body) };
    expect(() => new Webhook(secret).verify(body.replace('e1', 'e2'), headers)).toThrow(WebhookVerificationError);
    // The library accepts 5 minutes of clock skew; an attempt signed 10 minutes ago is a replay.
    const stale = { ...webhookHeaders([secret], id, new Date(Date.now() - 10 * 60 * 1000), body) };
    expect(() => new Webhook(secret).verify(body, stale)).toThrow(/timestamp/i);
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    // A signature of another webhook-id does not carry over.
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'another' })).toThrow(WebhookVerificationError);
  });

  it('during a rotation the request carries both signatures, and either secret verifies it', () => {
    const [previous, current] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = { ...webhookHeaders([current, previous], id, new Date(), body) };
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
  });
});
