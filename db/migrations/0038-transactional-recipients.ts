import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Issue 32: a contact's journey (GET /contacts/:id/journey) shows its transactional sends too. `POST /emails`
 * names recipients by address, not by contact, so those messages have no `contact_id`; the journey finds
 * them by the contact's email addresses among their `to` recipients.
 *
 * `to_addresses` holds mailboxes as written ("Ada <ada@example.com>"), so `mailbox_addresses` reduces them
 * to the lower-cased addresses (identities are stored lower-cased) and a GIN index over that answers
 * "messages to any of these addresses" by index. It covers only the rows that need it: transactional
 * messages without a contact (marketing messages always carry theirs). Its price is paid at acceptance:
 * measured on this machine (2 busy cores), inserting 50,000 such rows into a copy of `messages` took
 * 2.5 s without it and 3.6 s with it, about 20 µs a message (not yet run through `npm run bench`).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE FUNCTION mailbox_addresses(mailboxes text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT coalesce(array_agg(lower(coalesce(substring(m FROM '<([^<>]*)>\\s*$'), btrim(m)))), '{}') FROM unnest(mailboxes) AS m $$;
    CREATE INDEX messages_transactional_to_idx ON messages USING gin (mailbox_addresses(to_addresses))
      WHERE contact_id IS NULL AND kind = 'transactional';
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX messages_transactional_to_idx;
    DROP FUNCTION mailbox_addresses(text[]);
  `);
};
