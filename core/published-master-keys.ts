import { parseMasterKey } from './secrets';

/**
 * Every MASTER_KEY value that was ever committed to this repository (found with
 * `git log -p --all | grep -E 'MASTER_KEY|Buffer.alloc\(32'`): the development default, the sample that
 * docker-compose.yml shipped until issue 29, and the fixed keys of tests. Anyone can read them, so anyone
 * could forge tokens or open a database dump's secrets under them: production refuses each of them as
 * MASTER_KEY. Add to this list any key that is ever committed again.
 */
export const DEVELOPMENT_MASTER_KEY = 'ZGV2ZWxvcG1lbnQtb25seS1tYXN0ZXIta2V5LTMyYnk=';

const PUBLISHED = [
  DEVELOPMENT_MASTER_KEY,
  // docker-compose.yml, "a sample that works out of the box" (production accepted it).
  'pdgyzM41QqXlErz4iPAmr28/Mb1p9WxVartQRSJiKtU=',
  // test/faults/run.ts and the unit tests: Buffer.alloc(32, n).
  ...[1, 3, 4, 7, 8].map((byte) => Buffer.alloc(32, byte).toString('base64')),
].map(parseMasterKey);
// Also committed, but not 32 bytes of base64 or hex, so the format check already refuses them:
// 'change-me-to-32-random-bytes-in-base64-please' (an early docker-compose.yml) and 'k'.repeat(44) (tests).

/** Compared as bytes, so the same key spelt in hex or without padding is caught too. */
export function isPublishedMasterKey(key: Buffer): boolean {
  return PUBLISHED.some((published) => published.equals(key));
}
