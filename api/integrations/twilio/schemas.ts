import { z } from 'zod';
import { E164_PATTERN } from '../../http/formats';

export const SaveTwilioIntegrationBody = z
  .object({
    accountSid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio account SID (AC followed by 32 hex digits)'),
    authToken: z.string().min(1).max(256).describe('Checked against Twilio when saved; stored encrypted and never shown again'),
    whatsappFrom: z
      .string()
      .max(16)
      .describe('The WhatsApp sender, an E.164 number such as +14155552671, that exists in its country\'s numbering plan')
      .meta({ pattern: E164_PATTERN }),
  })
  .meta({ id: 'SaveTwilioIntegration' });

export const TwilioIntegrationSchema = z
  .union([
    z.object({ configured: z.literal(true), accountSid: z.string(), whatsappFrom: z.string() }),
    z.object({ configured: z.literal(false) }),
  ])
  .meta({ id: 'TwilioIntegration' });

export type SaveTwilioIntegrationInput = z.infer<typeof SaveTwilioIntegrationBody>;
export type TwilioIntegrationView = z.infer<typeof TwilioIntegrationSchema>;
