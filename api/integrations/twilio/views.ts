import type { TwilioIntegration } from '../../../db/repositories/whatsapp';
import type { TwilioIntegrationView } from './schemas';

/** The non-secret fields only: the auth token never leaves the database. */
export function twilioIntegrationView(integration: TwilioIntegration | null): TwilioIntegrationView {
  return integration ? { configured: true, accountSid: integration.accountSid, whatsappFrom: integration.whatsappFrom } : { configured: false };
}
