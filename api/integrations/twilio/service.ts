import type { Sequelize } from 'sequelize';
import { AppError } from '../../../core/errors';
import { parseE164 } from '../../../core/phone-numbers';
import { type Keyring, sealSecret } from '../../../core/secrets';
import { deleteTwilioIntegration, findTwilioIntegration, saveTwilioIntegration } from '../../../db/repositories/whatsapp';
import { createTwilioClient, twilioRefusal } from '../../../providers/twilio/client';
import type { SaveTwilioIntegrationInput } from './schemas';

export interface TwilioIntegrationServiceDeps {
  db: Sequelize;
  keyring: Keyring;
  /** TWILIO_API_URL. */
  apiUrl: string;
}

const invalid = (field: string, problem: string) => AppError.validation({ formErrors: [], fieldErrors: { [field]: [problem] } });

export function createTwilioIntegrationService(deps: TwilioIntegrationServiceDeps) {
  const { db } = deps;

  /** Fetches the account with the credentials: the one call that proves the SID and token belong together. */
  async function checkCredentials(accountSid: string, authToken: string): Promise<void> {
    try {
      await createTwilioClient(deps.apiUrl, accountSid, authToken).api.v2010.accounts(accountSid).fetch();
    } catch (error) {
      const refusal = twilioRefusal(error);
      // 401: wrong token; 404: no such account for these credentials. Anything else is Twilio's trouble, not the input's.
      if (refusal && (refusal.status === 401 || refusal.status === 403 || refusal.status === 404)) {
        throw invalid('authToken', `Twilio refused these credentials (${refusal.status}${refusal.code ? `, error ${refusal.code}` : ''})`);
      }
      if (refusal) throw new AppError('service_unavailable', `Twilio answered ${refusal.status} to the credential check; try again`);
      throw error;
    }
  }

  return {
    get: async (workspaceId: string) => findTwilioIntegration(db, workspaceId),

    async save(workspaceId: string, input: SaveTwilioIntegrationInput) {
      const whatsappFrom = parseE164(input.whatsappFrom);
      if (!whatsappFrom) throw invalid('whatsappFrom', 'must be a valid phone number in E.164 form, such as +14155552671');
      await checkCredentials(input.accountSid, input.authToken);
      return saveTwilioIntegration(db, workspaceId, {
        accountSid: input.accountSid,
        authTokenSealed: sealSecret(deps.keyring, { workspaceId, column: 'twilio_integrations.auth_token' }, input.authToken),
        whatsappFrom,
      });
    },

    async remove(workspaceId: string): Promise<void> {
      if (!(await deleteTwilioIntegration(db, workspaceId))) throw AppError.notFound('Twilio integration');
    },
  };
}

export type TwilioIntegrationService = ReturnType<typeof createTwilioIntegrationService>;
