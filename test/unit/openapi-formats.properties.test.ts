import fc from 'fast-check';
import { z } from 'zod';
import {
  BASE64_PATTERN,
  CONTENT_ID_PATTERN,
  displayName,
  E164_PATTERN,
  EMAIL_ADDRESS,
  FILENAME_PATTERN,
  MAILBOX_LIST_PATTERN,
  MAILBOX_PATTERN,
  MEDIA_TYPE_PATTERN,
  NOT_BLANK,
  TELEGRAM_CHAT_ID_PATTERN,
  text,
  UUID_PATTERN,
} from '../../api/http/formats';
import { parseMailboxes } from '../../core/addresses';
import { contentIdProblem, contentTypeProblem, decodeBase64Content, filenameProblem } from '../../core/attachments';
import { normaliseEmail, normaliseTelegramChatId } from '../../core/identities';
import { findUnsafeText } from '../../core/unsafe-text';

/**
 * The OpenAPI document's patterns (api/http/formats.ts) must lie inside the server's rules: a value a
 * client builds from the document is one the server accepts (the contract suite's positive_data_acceptance).
 * Each pattern is sampled with fast-check and handed to the rule it stands for.
 */
const sample = (pattern: string) => fc.stringMatching(new RegExp(pattern));
const runs = { numRuns: 300 };

describe('each documented pattern admits only what the server accepts', () => {
  it('an email address from EMAIL_ADDRESS → a valid contact identity', () => {
    fc.assert(fc.property(sample(EMAIL_ADDRESS), (value) => expect(normaliseEmail(value)).toMatchObject({ ok: true })), runs);
  });

  it('a mailbox, and a list of them, from their patterns → parsed, with as many addresses as written', () => {
    fc.assert(fc.property(sample(MAILBOX_PATTERN), (value) => expect(parseMailboxes(value)).toMatchObject({ ok: true })), runs);
    fc.assert(
      fc.property(sample(MAILBOX_LIST_PATTERN), (value) => {
        const parsed = parseMailboxes(value);
        expect(parsed).toMatchObject({ ok: true });
        expect(parsed.ok && parsed.mailboxes.length).toBe(value.split(',').length);
      }),
      runs,
    );
  });

  it('a Telegram chat id from its pattern → accepted; an E.164 shape is at most 15 digits after +', () => {
    fc.assert(fc.property(sample(TELEGRAM_CHAT_ID_PATTERN), (value) => expect(normaliseTelegramChatId(value)).toMatchObject({ ok: true })), runs);
    fc.assert(fc.property(sample(E164_PATTERN), (value) => expect(value).toMatch(/^\+[1-9]\d{6,14}$/)), runs);
  });

  it('a name from NOT_BLANK → accepted by text(), with no NUL for the edge to refuse', () => {
    const schema = text(10_000);
    fc.assert(
      fc.property(sample(NOT_BLANK), (value) => {
        expect(schema.safeParse(value).success).toBe(true);
        expect(findUnsafeText(value)).toBeNull();
      }),
      runs,
    );
  });

  it('a display name from its pattern → accepted by displayName()', () => {
    const schema = displayName(10_000);
    const pattern = (schema.meta() as { pattern: string }).pattern;
    fc.assert(fc.property(sample(pattern), (value) => expect(schema.safeParse(value).success).toBe(true)), runs);
  });

  it('attachment fields from their patterns → no problem found', () => {
    fc.assert(fc.property(sample(MEDIA_TYPE_PATTERN), (value) => expect(contentTypeProblem(value) ?? '').not.toContain('media type')), runs);
    fc.assert(fc.property(sample(BASE64_PATTERN), (value) => expect(decodeBase64Content(value)).toMatchObject({ ok: true })), runs);
    fc.assert(fc.property(sample(CONTENT_ID_PATTERN), (value) => expect(contentIdProblem(value)).toBeNull()), runs);
    fc.assert(fc.property(sample(FILENAME_PATTERN), (value) => expect(filenameProblem(value)).not.toBe('must not contain control characters')), runs);
  });

  it('a uuid from UUID_PATTERN → accepted by z.uuid()', () => {
    fc.assert(fc.property(sample(UUID_PATTERN), (value) => expect(z.uuid().safeParse(value).success).toBe(true)), runs);
  });
});
