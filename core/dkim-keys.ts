import { generateKeyPair as generateKeyPairCallback, randomInt } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPair = promisify(generateKeyPairCallback);

/**
 * A domain's DKIM key: RSA 2048 (the size receivers and SES BYODKIM accept; 1024 is deprecated).
 * The public half is published as `p=` in the DKIM TXT record: the base64 of the DER SubjectPublicKeyInfo
 * (RFC 6376 §3.6.1). The private half is kept as PKCS#8 PEM, sealed before it is stored.
 */
export interface DkimKeyPair {
  selector: string;
  publicKey: string;
  privateKeyPem: string;
}

export const DKIM_KEY_BITS = 2048;

const SELECTOR_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Each key gets its own random selector (`msg` + 8 characters) rather than one fixed name for every
 * domain: a rotated key can then be published beside the old one and both verify while mail signed with
 * the old key is still in flight, and one workspace's selector tells nothing about another's.
 */
export function newDkimSelector(): string {
  let suffix = '';
  for (let i = 0; i < 8; i += 1) suffix += SELECTOR_ALPHABET[randomInt(SELECTOR_ALPHABET.length)];
  return `msg${suffix}`;
}

export async function generateDkimKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', {
    modulusLength: DKIM_KEY_BITS,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector: newDkimSelector(), publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}
