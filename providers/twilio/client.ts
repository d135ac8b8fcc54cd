import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';

/**
 * The real `twilio` client, with every REST call sent to TWILIO_API_URL.
 *
 * The client has no base-URL option. Its `region` and `edge` settings only rewrite the host name inside
 * twilio.com (`api.dublin.ie1.twilio.com`), so they cannot reach a stand-in or a proxy on another host,
 * port or scheme. What it does take is an `httpClient`: every request of every product passes through its
 * `request(opts)` with the full Twilio URL, so a RequestClient that swaps that URL's origin for ours (keeping
 * the path and query) redirects them all, and everything else (basic auth, form encoding, error parsing into
 * RestException) stays the library's own.
 */
class RedirectingRequestClient extends RequestClient {
  constructor(private readonly base: URL) {
    super({ timeout: REQUEST_TIMEOUT_MS });
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>) {
    const target = new URL(opts.uri);
    const basePath = this.base.pathname.replace(/\/$/, '');
    const uri = `${this.base.origin}${basePath}${target.pathname}${target.search}`;
    return super.request({ ...opts, uri });
  }
}

/** A send or an account check waits no longer than this for Twilio's answer (the library's default is 30 s). */
const REQUEST_TIMEOUT_MS = 15_000;

export type TwilioClient = twilio.Twilio;

export function createTwilioClient(apiUrl: string, accountSid: string, authToken: string): TwilioClient {
  // No automatic retries: a throttled send is retried by its Temporal activity, on the activity's schedule.
  return twilio(accountSid, authToken, { httpClient: new RedirectingRequestClient(new URL(apiUrl)) });
}

/** Twilio's answer to a refused call: the HTTP status and Twilio's error code (21211 invalid number, …). */
export function twilioRefusal(error: unknown): { status: number; code: number | null; message: string } | null {
  if (!(error instanceof twilio.RestException)) return null;
  return { status: error.status, code: error.code ?? null, message: error.message };
}
