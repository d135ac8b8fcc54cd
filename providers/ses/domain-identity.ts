import { createPrivateKey } from 'node:crypto';
import {
  AlreadyExistsException,
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  NotFoundException,
  PutEmailIdentityDkimSigningAttributesCommand,
  type SESv2Client,
} from '@aws-sdk/client-sesv2';
import type { SesClients } from './clients';

export interface SesRegistration {
  verifiedForSending: boolean;
  /** SES's own DKIM status: PENDING, SUCCESS, FAILED, TEMPORARY_FAILURE or NOT_STARTED. */
  dkimStatus: string;
}

export interface SesDomainToRegister {
  name: string;
  region: string;
  selector: string;
  privateKeyPem: string;
}

/**
 * Registers a sending domain with SES using our own DKIM key (BYODKIM), so SES signs with the key the
 * customer published and not one of its own. Idempotent: an identity that exists is pointed at our key
 * when it is not already. SES verifies the DKIM record itself, so sending works only once it says so.
 * Each domain is registered in its own region, where its mail is later sent from.
 */
export function createSesDomainIdentities(clients: SesClients) {
  return {
    async register(domain: SesDomainToRegister): Promise<SesRegistration> {
      const client = clients.forRegion(domain.region);
      const signing = {
        DomainSigningSelector: domain.selector,
        // SES takes the RSA private key as base64 DER, the PEM body without its armour lines (PKCS#1).
        DomainSigningPrivateKey: createPrivateKey(domain.privateKeyPem).export({ type: 'pkcs1', format: 'der' }).toString('base64'),
      };
      try {
        await client.send(new CreateEmailIdentityCommand({ EmailIdentity: domain.name, DkimSigningAttributes: signing }));
      } catch (error) {
        if (!(error instanceof AlreadyExistsException)) throw error;
        const existing = await client.send(new GetEmailIdentityCommand({ EmailIdentity: domain.name }));
        const dkim = existing.DkimAttributes;
        if (dkim?.SigningAttributesOrigin !== 'EXTERNAL' || !dkim.Tokens?.includes(domain.selector)) {
          await putSigning(client, domain.name, signing);
        }
      }
      const identity = await client.send(new GetEmailIdentityCommand({ EmailIdentity: domain.name }));
      const dkimStatus = identity.DkimAttributes?.Status ?? 'NOT_STARTED';
      // SES stops looking for the record after 72 hours (FAILED); setting the key again restarts its check.
      if (dkimStatus === 'FAILED') await putSigning(client, domain.name, signing);
      return { verifiedForSending: identity.VerifiedForSendingStatus === true, dkimStatus };
    },

    /** Removes the domain's identity, and with it the DKIM key we gave SES; one that is not there is no error. */
    async remove(domain: { name: string; region: string }): Promise<void> {
      try {
        await clients.forRegion(domain.region).send(new DeleteEmailIdentityCommand({ EmailIdentity: domain.name }));
      } catch (error) {
        if (!(error instanceof NotFoundException)) throw error;
      }
    },
  };
}

export type SesDomainIdentities = ReturnType<typeof createSesDomainIdentities>;

async function putSigning(client: SESv2Client, name: string, signing: { DomainSigningSelector: string; DomainSigningPrivateKey: string }): Promise<void> {
  await client.send(
    new PutEmailIdentityDkimSigningAttributesCommand({ EmailIdentity: name, SigningAttributesOrigin: 'EXTERNAL', SigningAttributes: signing }),
  );
}
