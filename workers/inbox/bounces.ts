import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Client } from '@temporalio/client';
import type { ReturnPathTokens } from '../../core/bounces/return-path';
import type { BlobStore } from '../../db/blob-store';
import { withDeadline } from '../../temporal/deadline';
import { startBounceMailWorkflow } from '../../temporal/inbound';
import type { SpooledRaw } from './acceptance';

/** What the MX does with mail to a VERP return path (`bounces+<token>@…`, any domain): no inbox is involved. */
export interface BounceIntake {
  /** Whether a token is genuine (its MAC verifies under the keyring): a made-up one is refused at RCPT. */
  verify: (token: string) => boolean;
  /** Stores the report and starts its workflow for each token; throws when either fails (the MX answers 451). */
  accept: (message: SpooledRaw, tokens: readonly string[]) => Promise<void>;
}

export interface BounceIntakeDeps {
  blobs: BlobStore;
  client: Client;
  taskQueuePrefix: string;
  tokens: ReturnPathTokens;
}

/** How long one start may take before the MX gives up and answers 451 (the sender's queue retries). */
const START_DEADLINE_MS = 5_000;

function fileDigest(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path).on('data', (chunk) => hash.update(chunk)).on('error', reject).on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Bounce mail is durable before the 250 in a way of its own: the bytes in the blob store and the workflow
 * started, both named by the digest of the bytes and the token, so the sender's retry after a lost 250
 * overwrites the same object and finds the workflow started (one record). No outbox row is needed: when
 * Temporal is away the MX answers 451 and the sender keeps the report in its queue.
 */
export function bounceIntake(deps: BounceIntakeDeps): BounceIntake {
  return {
    verify: (token) => deps.tokens.read(token) !== null,
    async accept(message, tokens) {
      const bytes = await fileDigest(message.path);
      for (const token of new Set(tokens.map((each) => each.toLowerCase()))) {
        const digest = createHash('sha256').update(bytes).update(':').update(token).digest('hex');
        const blobKey = `bounces/${digest}.eml`;
        await deps.blobs.putFile(blobKey, message.path, message.size, 'message/rfc822');
        await withDeadline(deps.client, START_DEADLINE_MS, () =>
          startBounceMailWorkflow(deps.client, deps.taskQueuePrefix, { blobKey, token, digest }));
      }
    },
  };
}
