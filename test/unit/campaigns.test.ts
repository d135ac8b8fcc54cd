import { campaignChannels } from '../../core/campaign-channels';
import { metricsSummary, NO_COUNTS, progressOf } from '../../core/campaign-metrics';
import { autoPauseReason, needsConfirmation, outboxWindow } from '../../core/campaigns';
import { confirmationTokens } from '../../core/confirmation-token';

const NOW = new Date('2026-11-25T12:00:00Z');
const minutes = (n: number) => new Date(NOW.getTime() + n * 60_000);

describe('campaign send rules', () => {
  it('now, the past and anything under 5 minutes ahead need a confirmation; 5 minutes or more do not', () => {
    expect(needsConfirmation(null, NOW)).toBe(true);
    expect(needsConfirmation(minutes(-10), NOW)).toBe(true);
    expect(needsConfirmation(new Date(minutes(5).getTime() - 1), NOW)).toBe(true);
    expect(needsConfirmation(minutes(5), NOW)).toBe(false);
    expect(needsConfirmation(minutes(60 * 48), NOW)).toBe(false);
  });
});

describe('the outbox window', () => {
  it('is the provider rate over the lead time, at least two batches, written in pages no larger than it', () => {
    expect(outboxWindow({ ratePerSecond: 14, leadTimeMs: 60_000, batchSize: 500, pageSize: 2_000 })).toEqual({ window: 1_000, page: 1_000 });
    expect(outboxWindow({ ratePerSecond: 500, leadTimeMs: 60_000, batchSize: 500, pageSize: 2_000 })).toEqual({ window: 30_000, page: 2_000 });
    expect(outboxWindow({ ratePerSecond: 0.5, leadTimeMs: 1_000, batchSize: 1, pageSize: 2_000 })).toEqual({ window: 2, page: 2 });
  });
});

describe('auto-pause', () => {
  const thresholds = { afterSent: 1_000, bounceRate: 0.05, complaintRate: 0.002 };

  it('says nothing before enough sends, whatever the rates', () => {
    expect(autoPauseReason({ sent: 999, hardBounces: 999, complaints: 999 }, thresholds)).toBeNull();
  });

  it('pauses above the bounce or the complaint rate, not at it', () => {
    expect(autoPauseReason({ sent: 1_000, hardBounces: 50, complaints: 2 }, thresholds)).toBeNull();
    expect(autoPauseReason({ sent: 1_000, hardBounces: 51, complaints: 0 }, thresholds)).toBe('hard bounce rate 5.1% over 1000 sends is above 5%');
    expect(autoPauseReason({ sent: 2_000, hardBounces: 0, complaints: 5 }, thresholds)).toBe('complaint rate 0.25% over 2000 sends is above 0.2%');
  });

  it('is off when the sample is 0', () => {
    expect(autoPauseReason({ sent: 10, hardBounces: 10, complaints: 10 }, { ...thresholds, afterSent: 0 })).toBeNull();
  });
});

describe('campaign metrics', () => {
  it('rates are fractions over delivered (clicks to opens over unique opens, bounces over sent), null without a denominator', () => {
    expect(metricsSummary(10, NO_COUNTS)).toMatchObject({ recipients: 10, openRate: null, clickRate: null, clickToOpenRate: null, unsubscribeRate: null, bounceRate: null });
    const counts = { ...NO_COUNTS, sent: 10, delivered: 8, uniqueOpens: 4, uniqueClicks: 1, hardBounces: 1, softBounces: 1, unsubscribes: 2 };
    expect(metricsSummary(10, counts)).toMatchObject({ openRate: 0.5, clickRate: 0.125, clickToOpenRate: 0.25, unsubscribeRate: 0.25, bounceRate: 0.2 });
  });

  it('progress: the average rate since the start, and when the rest should be sent at it', () => {
    const started = new Date(NOW.getTime() - 100_000);
    const progress = progressOf({ recipients: 3_000, canceled: 0, startedAt: started, sending: true }, { sent: 1_400, failed: 100 }, NOW);
    expect(progress).toMatchObject({ sent: 1_400, failed: 100, ratePerSecond: 14 });
    expect(progress.expectedEndAt?.toISOString()).toBe(new Date(NOW.getTime() + (1_500 / 14) * 1000).toISOString());
    expect(progressOf({ recipients: 10, canceled: 4, startedAt: started, sending: false }, { sent: 6, failed: 0 }, NOW).expectedEndAt).toBeNull();
    expect(progressOf({ recipients: 10, canceled: 0, startedAt: started, sending: true }, { sent: 0, failed: 0 }, NOW).ratePerSecond).toBeNull();
  });
});

describe('confirmation tokens', () => {
  const tokens = confirmationTokens([Buffer.alloc(32, 7)]);
  const claims = { campaignId: '6f1d3a52-4c5e-4b8f-9a0b-1c2d3e4f5a6b', revision: 3, expiresAt: minutes(10) };

  it('read back what was signed', () => {
    expect(tokens.read(tokens.sign(claims))).toEqual(claims);
  });

  it('refuse a token altered anywhere, made with another key, or not in the canonical spelling', () => {
    const token = tokens.sign(claims);
    for (let i = 0; i < token.length; i += 7) {
      const altered = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(tokens.read(altered)).toBeNull();
    }
    expect(confirmationTokens([Buffer.alloc(32, 8)]).read(token)).toBeNull();
    expect(tokens.read(`${token}=`)).toBeNull();
    expect(tokens.read('')).toBeNull();
    expect(tokens.read('x'.repeat(10_000))).toBeNull();
  });
  it('a token issued before a MASTER_KEY rotation is still read with the previous key in the ring', () => {
    expect(confirmationTokens([Buffer.alloc(32, 9), Buffer.alloc(32, 7)]).read(tokens.sign(claims))).toEqual(claims);
  });
});

describe('campaign channels', () => {
  it('the preferred channel first, then the chain in order, each channel once', () => {
    expect(campaignChannels('email', [])).toEqual(['email']);
    expect(campaignChannels('whatsapp', ['telegram', 'email'])).toEqual(['whatsapp', 'telegram', 'email']);
    expect(campaignChannels('telegram', ['telegram', 'email', 'email'])).toEqual(['telegram', 'email']);
  });
});
