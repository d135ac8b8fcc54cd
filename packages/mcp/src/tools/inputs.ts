import { z } from 'zod';

/** The API's ids are UUIDs; checking here answers an agent's typo before any request is made. */
export const Id = (what: string) => z.uuid().describe(what);

/** One address or several; the API takes either. */
export const Addresses = (what: string) => z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(50)]).describe(what);

export const Variables = z
  .record(z.string(), z.unknown())
  .describe('Liquid variables of the template, or of subject/html/text themselves ({"first_name": "Ann"})');

export const IdempotencyKey = z
  .string()
  .min(8)
  .max(255)
  .describe(
    'Optional. Give your own and repeat it when you retry the same send: the API answers the first send (status duplicate) ' +
      'instead of sending twice. Left out, the client makes one for this call (its own retries reuse it).',
  );

/** An inbox reply without a key is deduplicated by the service on its content, which a random key would defeat. */
export const ReplyIdempotencyKey = z
  .string()
  .min(8)
  .max(255)
  .describe(
    'Optional. Left out, the same answer sent again to the same thread within 10 minutes is taken as a repeat (status duplicate), ' +
      'not sent twice; give a key to control that yourself.',
  );
