/**
 * The export formats an import understands. Each is a mapping preset over the same row reader: the file is
 * read the same way whatever its origin, and the caller's own `mapping` overrides the preset column by column
 * (`"Phone Number": "phone"`, or `"ignore"` to drop one). Chosen once, when the job is read, never by a
 * switch in the import code.
 */
export const IMPORT_PROVIDERS = ['csv', 'mailchimp', 'listmonk'] as const;
export type ImportProvider = (typeof IMPORT_PROVIDERS)[number];

const PRESETS: Record<ImportProvider, Record<string, string>> = {
  // Any CSV: the caller maps every column.
  csv: {},
  // Mailchimp's audience export (subscribed, unsubscribed or cleaned members). Phone numbers there are free
  // text, often without a country code, so they are kept as an attribute unless mapped to `phone`; TAGS holds
  // the member's tags, quoted and comma-separated.
  mailchimp: {
    'Email Address': 'email',
    'First Name': 'attribute:firstName',
    'Last Name': 'attribute:lastName',
    Address: 'attribute:address',
    'Phone Number': 'attribute:phoneNumber',
    TAGS: 'tag',
    MEMBER_RATING: 'attribute:memberRating',
    OPTIN_TIME: 'attribute:optinTime',
    LANGUAGE: 'attribute:locale',
    TIMEZONE: 'attribute:timezone',
  },
  // listmonk's subscriber export and import format: attributes is a JSON object; status `blocklisted` does
  // what an unsubscribe does here (suppression `unsubscribed`, email consent `opted_out`).
  listmonk: {
    email: 'email',
    name: 'attribute:name',
    attributes: 'attributes',
    status: 'listmonk:status',
  },
};

export interface EffectiveMapping {
  mapping: Record<string, string>;
  /** Columns the caller named: an import whose file lacks one fails (a typo must not drop data silently). */
  required: string[];
}

export function effectiveMapping(provider: ImportProvider, given: Readonly<Record<string, string>>): EffectiveMapping {
  return { mapping: { ...PRESETS[provider], ...given }, required: Object.keys(given).filter((column) => given[column] !== 'ignore') };
}
