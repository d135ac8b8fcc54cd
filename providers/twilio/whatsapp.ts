import { twilioError } from '../../core/chat-refusals';
import { isConnectionFailure, PermanentSendError, ProviderUnavailableError, RecipientRefusedError, type SendReceipt } from '../../core/delivery';
import { parseE164 } from '../../core/phone-numbers';
import { type Keyring, openSecret } from '../../core/secrets';
import { inSendSpan } from '../send-span';
import { createTwilioClient, type TwilioClient, twilioRefusal } from './client';

/**
 * What a WhatsApp message says: free-form text (only inside the customer-service window), or an approved
 * content template (any time), whose variables Twilio fills in ({"1": "Ann"}).
 */
export type WhatsAppContent =
  | { kind: 'text'; body: string }
  | { kind: 'template'; contentSid: string; contentVariables: Record<string, string> };

export interface OutboundWhatsApp {
  workspaceId: string;
  /** Our message id. */
  messageId: string;
  /** The customer's number, E.164. */
  to: string;
  content: WhatsAppContent;
  /** Public URLs Twilio fetches and attaches (images, documents). */
  mediaUrls: string[];
}

/** A workspace's Twilio account, its auth token still sealed (core/secrets.ts). */
export interface TwilioAccount {
  accountSid: string;
  authTokenSealed: string;
  /** The WhatsApp sender, E.164. */
  whatsappFrom: string;
}

/**
 * What the channel needs to know of a workspace, read from storage by the caller: a provider never reads
 * the database (activities/whatsapp-delivery.ts, whatsAppAccounts, answers from db/repositories/whatsapp.ts).
 */
export interface WhatsAppAccounts {
  find(workspaceId: string): Promise<TwilioAccount | null>;
  /** Whether the customer wrote within WhatsApp's 24-hour customer-service window. */
  insideServiceWindow(workspaceId: string, phone: string, now: Date): Promise<boolean>;
}

export interface WhatsAppChannelDeps {
  accounts: WhatsAppAccounts;
  keyring: Keyring;
  /** TWILIO_API_URL. */
  apiUrl: string;
  /** PUBLIC_BASE_URL: where Twilio posts the message's statuses. */
  publicBaseUrl: string;
  now?: () => Date;
}

/** The WhatsApp channel through Twilio's Messages API, with each workspace's own account. */
export function createWhatsAppChannel(deps: WhatsAppChannelDeps) {
  const now = deps.now ?? (() => new Date());
  const base = deps.publicBaseUrl.replace(/\/$/, '');
  // One client per workspace and token, so its connections are reused; a saved new token replaces it.
  const clients = new Map<string, { sealed: string; client: TwilioClient }>();

  function clientFor(workspaceId: string, accountSid: string, sealed: string): TwilioClient {
    const cached = clients.get(workspaceId);
    if (cached?.sealed === sealed) return cached.client;
    const client = createTwilioClient(deps.apiUrl, accountSid, openSecret(deps.keyring, { workspaceId, column: 'twilio_integrations.auth_token' }, sealed));
    clients.set(workspaceId, { sealed, client });
    return client;
  }

  return {
    provider: 'twilio' as const,

    /** Sends and answers Twilio's MessageSid. Refusals retrying cannot fix are PermanentSendError; throttling and outages throw to be retried. */
    send: (message: OutboundWhatsApp): Promise<SendReceipt> => inSendSpan({ provider: 'twilio', channel: 'whatsapp', messageId: message.messageId }, async () => {
      const integration = await deps.accounts.find(message.workspaceId);
      if (!integration) throw new PermanentSendError('The workspace has no Twilio integration (PUT /integrations/twilio)');
      const to = parseE164(message.to);
      if (!to) throw new PermanentSendError(`${message.to} is not a valid E.164 phone number`);
      // WhatsApp itself refuses free-form text outside the window (Twilio error 63016), but only after accepting the send: refuse it first.
      if (message.content.kind === 'text' && !(await deps.accounts.insideServiceWindow(message.workspaceId, to, now()))) {
        throw new PermanentSendError(
          'Free-form WhatsApp text can only be sent within 24 hours of the customer\'s last message; outside that window a content template (contentSid) is needed',
        );
      }
      const content = message.content.kind === 'text'
        ? { body: message.content.body }
        : { contentSid: message.content.contentSid, contentVariables: JSON.stringify(message.content.contentVariables) };
      try {
        const sent = await clientFor(message.workspaceId, integration.accountSid, integration.authTokenSealed).messages.create({
          from: `whatsapp:${integration.whatsappFrom}`,
          to: `whatsapp:${to}`,
          ...content,
          ...(message.mediaUrls.length > 0 && { mediaUrl: message.mediaUrls }),
          statusCallback: `${base}/callbacks/twilio/${message.workspaceId}/status`,
        });
        return { provider: 'twilio', providerMessageId: sent.sid };
      } catch (error) {
        const refusal = twilioRefusal(error);
        // 429 (throttled) and 5xx are Twilio's state, not the message's: counted by the sender's breaker below.
        if (refusal && refusal.status >= 400 && refusal.status < 500 && refusal.status !== 429) {
          const said = `Twilio refused the message (${refusal.status}${refusal.code ? `, error ${refusal.code}` : ''}): ${refusal.message}`;
          const known = twilioError(refusal.code);
          // A recipient's lasting refusal (21211, 21610, ...) also suppresses the number (chat-delivery.ts).
          if (known?.suppress) throw new RecipientRefusedError(`${said} (${known.meaning}); ${to} is now suppressed on whatsapp (${known.suppress})`, known.suppress, said);
          throw new PermanentSendError(known ? `${said} (${known.meaning})` : said);
        }
        // Throttled, failing or unreachable: the sender's route is down for now (its breaker counts it).
        if (refusal || isConnectionFailure(error)) throw new ProviderUnavailableError(`Twilio ${refusal ? refusal.status : 'unreachable'}: ${(error as Error).message}`, { cause: error });
        throw error;
      }
    }),
  };
}

export type WhatsAppChannel = ReturnType<typeof createWhatsAppChannel>;
