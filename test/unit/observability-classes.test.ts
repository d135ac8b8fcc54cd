import { type Gauge, Registry } from 'prom-client';
import { resultOfError, resultOfStatus } from '../../activities/webhook-metrics';
import type { BreakerState } from '../../db/repositories/provider-breakers';
import { PublicFetchError } from '../../infra/public-fetch';
import { createBreakerGauge, exportBreakers } from '../../workers/dispatcher';
import { refusalReason } from '../../workers/inbox/refusal-metrics';

async function series(gauge: Gauge) {
  const values: Array<Record<string, string | number | undefined>> = (await gauge.get()).values.map(({ labels, value }) => ({ ...labels, value }));
  return values.sort((a, b) => String(a.route).localeCompare(String(b.route)));
}

/** Open breakers as findOpenBreakers answers them. */
const opened = (...routes: string[]): BreakerState[] => routes.map((route) => ({ route, open: true, failures: 5, openedAt: new Date() }));

describe('the breaker gauge', () => {
  it('shows the email route by its provider and counts chat routes per channel, never naming a workspace', async () => {
    const gauge = createBreakerGauge(new Registry());
    const workspace = '6a1f5c1e-0000-4000-8000-000000000001';
    exportBreakers(gauge, ['email', 'whatsapp', 'telegram'], opened('email:ses', `whatsapp:${workspace}`, 'whatsapp:6a1f5c1e-0000-4000-8000-000000000002'));
    expect(await series(gauge)).toEqual([
      { channel: 'email', route: 'email:ses', value: 1 },
      { channel: 'telegram', route: 'telegram:workspaces', value: 0 },
      { channel: 'whatsapp', route: 'whatsapp:workspaces', value: 2 },
    ]);
    expect(JSON.stringify(await gauge.get())).not.toContain(workspace);
  });

  it('drops the email route once it closes and keeps the chat counts at 0', async () => {
    const gauge = createBreakerGauge(new Registry());
    exportBreakers(gauge, ['email', 'whatsapp'], opened('email:smtp'));
    exportBreakers(gauge, ['email', 'whatsapp'], []);
    expect(await series(gauge)).toEqual([{ channel: 'whatsapp', route: 'whatsapp:workspaces', value: 0 }]);
  });
});

describe('inbound refusal reasons', () => {
  it.each([
    [421, '4.7.0 Too many connections from your address, try again in 30 s', 'rate'],
    [450, '4.7.1 Too many messages from your address, try again in 5 s', 'rate'],
    [550, '5.1.1 No such mailbox', 'unknown_recipient'],
    [550, '5.7.1 Relaying denied: this server takes no mail for that domain', 'relay_denied'],
    [550, '5.7.1 Sender blocked by the recipient', 'sender_refused'],
    [552, '5.3.4 Message exceeds the maximum size of 1048576 bytes', 'size'],
    [452, "4.2.2 Mailbox full: the recipient's storage quota is used up, try again later", 'mailbox_full'],
    [452, '4.3.1 Insufficient system storage, try again later', 'spool_full'],
    [451, '4.3.0 Temporary failure, try again later', 'temporary'],
    [503, '5.5.1 No valid recipients', 'no_recipients'],
    [500, 'something else', 'other'],
  ])('%d %s is %s', (code, text, reason) => {
    expect(refusalReason(code, text)).toBe(reason);
  });
});

describe('webhook attempt results', () => {
  it('classes answers by status family and failures by what went wrong', () => {
    expect([204, 302, 404, 410, 503].map(resultOfStatus)).toEqual(['succeeded', 'http_other', 'http_4xx', 'http_4xx', 'http_5xx']);
    const failure = (reason: ConstructorParameters<typeof PublicFetchError>[0]) => resultOfError(new PublicFetchError(reason, 'x'));
    expect([failure('timeout'), failure('network'), failure('unresolvable'), failure('blocked_address'), resultOfError(new Error('x'))])
      .toEqual(['timeout', 'connection', 'connection', 'blocked', 'other']);
  });
});
