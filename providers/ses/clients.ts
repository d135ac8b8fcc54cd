import { SESv2Client, type SESv2ClientConfig } from '@aws-sdk/client-sesv2';

/**
 * Bounds on every SES call. A delivery attempt may run 2 minutes (workflows/send-message.ts); a hung SES call
 * must fail well inside that, so the attempt is retried by Temporal instead of timing out as a whole:
 * at most 2 tries × (5 s to connect + 25 s for the request and answer) ≈ 1 minute. 25 s leaves room to
 * upload a raw message of several megabytes on a slow link.
 */
export const SES_TIMEOUTS = { connectionTimeoutMs: 5_000, requestTimeoutMs: 25_000, maxAttempts: 2 };

export interface SesClients {
  /** The process's client for that region, created on first use and reused after. */
  forRegion(region: string): SESv2Client;
  destroy(): void;
}

/**
 * One SES v2 client per region. A domain's SES identity exists only in its own region, so its mail must be
 * sent, and the domain registered, through that region's endpoint. Endpoint and credentials come from the
 * AWS SDK's own environment variables unless `overrides` says otherwise (tests point it at stand-ins).
 */
export function createSesClients(
  options: { timeouts?: Partial<typeof SES_TIMEOUTS>; overrides?: Omit<SESv2ClientConfig, 'region'> } = {},
): SesClients {
  const timeouts = { ...SES_TIMEOUTS, ...options.timeouts };
  const clients = new Map<string, SESv2Client>();
  return {
    forRegion(region) {
      let client = clients.get(region);
      if (!client) {
        client = new SESv2Client({
          region,
          maxAttempts: timeouts.maxAttempts,
          // The options of the SDK's NodeHttpHandler, which builds it from them (no direct dependency on @smithy).
          requestHandler: {
            connectionTimeout: timeouts.connectionTimeoutMs,
            requestTimeout: timeouts.requestTimeoutMs,
            // Without it the handler only logs a warning when requestTimeout passes, and keeps waiting.
            throwOnRequestTimeout: true,
          },
          ...options.overrides,
        });
        clients.set(region, client);
      }
      return client;
    },
    destroy() {
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}
