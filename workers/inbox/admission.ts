import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { clientKey } from '../../core/inbox/client-key';

export interface AdmissionLimits {
  /** Connections one client address holds at once. */
  connectionsPerIp: number;
  /** New connections per client address per minute. */
  connectionsPerIpPerMinute: number;
  /** Messages (MAIL FROM) per client address per minute. */
  messagesPerIpPerMinute: number;
}

/** Why a client is turned away: the SMTP code and text to answer, and when it may come back. */
export interface Refusal {
  code: number;
  text: string;
}

/**
 * Who may connect and start a message, per client address (core/inbox/client-key.ts), so one sender cannot
 * take the connection slots, the spool or the database from the others. Counted in this process's memory by
 * rate-limiter-flexible: an MX runs one listener or a few, each refusing on its own count, and a limiter kept
 * in Redis would add a network round trip to every connection and a way for a Redis outage to stop mail.
 */
export class InboundAdmission {
  private readonly open = new Map<string, number>();
  private readonly sessions = new Map<string, string>();
  private readonly connectionRate: RateLimiterMemory;
  private readonly messageRate: RateLimiterMemory;

  constructor(private readonly limits: AdmissionLimits) {
    this.connectionRate = new RateLimiterMemory({ keyPrefix: 'inbound-connect', points: limits.connectionsPerIpPerMinute, duration: 60 });
    this.messageRate = new RateLimiterMemory({ keyPrefix: 'inbound-message', points: limits.messagesPerIpPerMinute, duration: 60 });
  }

  /** At connect, before the greeting: null admits the session (and counts it until `leave`). */
  async admit(sessionId: string, remoteAddress: string): Promise<Refusal | null> {
    const key = clientKey(remoteAddress);
    if ((this.open.get(key) ?? 0) >= this.limits.connectionsPerIp) {
      return { code: 421, text: '4.7.0 Too many connections from your address, try again later' };
    }
    const limited = await this.consume(this.connectionRate, key);
    if (limited) return { code: 421, text: `4.7.0 Too many connections from your address, try again in ${limited} s` };
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
    this.sessions.set(sessionId, key);
    return null;
  }

  /** At MAIL FROM: null lets the transaction start. 450, so the sender's queue keeps the message and retries. */
  async startMessage(remoteAddress: string): Promise<Refusal | null> {
    const limited = await this.consume(this.messageRate, clientKey(remoteAddress));
    return limited ? { code: 450, text: `4.7.1 Too many messages from your address, try again in ${limited} s` } : null;
  }

  /** When the session closes; a session that was never admitted counts nothing. */
  leave(sessionId: string): void {
    const key = this.sessions.get(sessionId);
    if (key === undefined) return;
    this.sessions.delete(sessionId);
    const left = (this.open.get(key) ?? 1) - 1;
    if (left > 0) this.open.set(key, left);
    else this.open.delete(key);
  }

  /** Seconds until the key may try again when its points are spent, else null (the point is taken). */
  private async consume(limiter: RateLimiterMemory, key: string): Promise<number | null> {
    try {
      await limiter.consume(key);
      return null;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return Math.max(1, Math.ceil(rejection.msBeforeNext / 1_000));
      throw rejection;
    }
  }
}
