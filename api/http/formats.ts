import { z } from 'zod';

/**
 * Request fields whose zod rule is code the OpenAPI generator cannot read (a trim before a length, an
 * address parser, a refinement) carry the same rule as JSON Schema here, so the published document
 * refuses what the server refuses and a client generated from it builds requests the server accepts
 * (issue 21; the contract suite, `npm run test:contract`, checks it). Where the exact rule is more than a
 * pattern can say (an address's country numbering plan, a public domain suffix), the pattern is the
 * common form the server accepts, and the field's description names the rest.
 *
 * Patterns are written for both ECMAScript and Python regular expressions (JSON Schema tools use either):
 * explicit ASCII classes rather than `\w`, bounded repetitions so a length limit holds by construction.
 */

/**
 * NUL, which no string may hold (refused at the edge for every route, api/http/route.ts): every negated class
 * below excludes it, so a generator never draws it from a pattern. Unpaired surrogates, refused the same way,
 * cannot be written in a pattern that Rust's and Python's regex engines (JSON Schema validators) both accept;
 * the document's description states the rule, and JSON generators do not produce them (they cannot be encoded).
 */
const UNSAFE = '\\u0000';
const SAFE_CHAR = `[^${UNSAFE}]`;

/** Not empty once trimmed (JS trims the BOM too), and no unsafe character. */
export const NOT_BLANK = `^${SAFE_CHAR}*[^\\s\\uFEFF${UNSAFE}]${SAFE_CHAR}*$`;

/** A name or label: trimmed, then `min` to `max` characters. */
export const text = (max: number, min = 1) => z.string().trim().min(min).max(max).meta({ pattern: NOT_BLANK });

// eslint-disable-next-line no-control-regex -- CR and LF would start a new header; control characters have no place in a name
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A display name shown in a header: trimmed, not blank, no control characters (CR and LF would start a new header). */
export const displayName = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((value) => !CONTROL.test(value), 'must not contain line breaks or control characters')
    .meta({ pattern: `^[^\\u0000-\\u001f\\u007f${UNSAFE}]*[^\\s\\uFEFF\\u0000-\\u001f\\u007f${UNSAFE}][^\\u0000-\\u001f\\u007f${UNSAFE}]*$` });

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,30}";
const LABEL = '[A-Za-z0-9]{1,20}(-[A-Za-z0-9]{1,20})?';
/** An address as core/identities.ts accepts it: a dot-atom local part, letters-digits-hyphen labels, a letter TLD. */
const ADDRESS = `${ATOM}(\\.${ATOM})?@(${LABEL}\\.){1,3}[A-Za-z]{2,20}`;
const NAME = '[A-Za-z0-9]([A-Za-z0-9 -]{0,40}[A-Za-z0-9])?';
const MAILBOX = `(${ADDRESS}|${NAME} <${ADDRESS}>)`;

/** A domain name's form (letters-digits-hyphen labels, a letter TLD); whether its suffix is public is checked by the server. */
export const DOMAIN_NAME_PATTERN = `^(${LABEL}\\.){1,3}[A-Za-z]{2,20}$`;
/** One email address, as a contact identity or a suppression holds it. */
export const EMAIL_ADDRESS = `^${ADDRESS}$`;
/** `address` or `Name <address>`. */
export const MAILBOX_PATTERN = `^${MAILBOX}$`;
/** One or more mailboxes in one string, separated by commas. */
export const MAILBOX_LIST_PATTERN = `^${MAILBOX}(, ?${MAILBOX}){0,9}$`;

/** No line break anywhere (a subject or header value with one would start a new header). */
export const SINGLE_LINE_PATTERN = `^[^\\r\\n${UNSAFE}]*$`;

/** The shape of an E.164 number; whether it exists in its country's numbering plan is checked by the server. */
export const E164_PATTERN = '^\\+[1-9][0-9]{6,14}$';
/** A Telegram chat id: a non-zero integer (groups are negative). */
export const TELEGRAM_CHAT_ID_PATTERN = '^-?[1-9][0-9]{0,15}$';

/** What zod's z.uuid() accepts (RFC 9562: a version digit 1-8 and the variant bits 10), plus the nil and max uuids. */
export const UUID_PATTERN =
  '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$';

/** Any 8-4-4-4-12 hex string: what a template name may not look like, since a send names a template by id or name. */
export const UUID_SHAPE_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A media type without parameters, as core/attachments.ts reads one (`application/pdf`). */
export const MEDIA_TYPE_PATTERN = "^[A-Za-z0-9_!#$&^.+-]+/[A-Za-z0-9_!#$&^.+-]+$";

/** A file name without control characters; an executable extension is refused by the server (the list is long). */
export const FILENAME_PATTERN = `^[^\\u0000-\\u001f\\u007f-\\u009f${UNSAFE}]+$`;

/** A Content-ID goes between angle brackets in a header: no white space, angle brackets or control characters. */
export const CONTENT_ID_PATTERN = `^[^\\s<>\\u0000-\\u001f\\u007f-\\u009f${UNSAFE}]+$`;

/** An https URL (a host, an optional port and path); whether the host resolves to public addresses is checked with DNS. */
export const HTTPS_URL_PATTERN = `^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\\s${UNSAFE}]*)?$`;

/** Padded base64, as core/attachments.ts decodes it (no data: prefix). */
export const BASE64_PATTERN = '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$';

/** The largest `offset` of a paged list: far past any real page, and well inside what PostgreSQL and JSON carry exactly. */
export const MAX_OFFSET = 10_000_000;
export const offset = () => z.coerce.number().int().min(0).max(MAX_OFFSET).default(0);

/** An identity address by channel, for the channel-and-address objects of contacts and suppressions. */
export function addressByChannel(options: { channelRequired: boolean; defaultChannel?: 'email' }) {
  const branch = (channel: string, pattern: string) => ({
    ...(options.defaultChannel === channel ? {} : { required: ['channel'] }),
    properties: { channel: { const: channel }, address: { pattern } },
  });
  return {
    oneOf: [branch('email', EMAIL_ADDRESS), branch('whatsapp', E164_PATTERN), branch('telegram', TELEGRAM_CHAT_ID_PATTERN)].map((item) =>
      options.channelRequired ? { ...item, required: ['channel'] } : item,
    ),
  };
}
