import type { Response } from 'express';
import type { Sequelize } from 'sequelize';
import { contactCsvFields, contactCsvHeader } from '../../core/contact-csv';
import { csvRecord } from '../../core/csv';
import { AppError } from '../../core/errors';
import { CONTACT_EXPORT_LIMITS, contactData } from '../../db/repositories/contact-data';
import { type ExportFilters, exportAttributeKeys, exportPage } from '../../db/repositories/contact-export';
import { findContact } from '../../db/repositories/contacts';
import { drained } from '../http/drained';
import type { ContactExportQueryInput } from './export-schemas';
import { segmentCondition } from './segment-condition';

/** Contacts per page of the CSV export: one keyset read each, so memory stays one page whatever the size. */
const CSV_PAGE = 2_000;

export function createContactExports(db: Sequelize, audienceDb: Sequelize = db) {
  async function filtersOf(workspaceId: string, query: ContactExportQueryInput): Promise<ExportFilters> {
    const filters: ExportFilters = { listId: query.listId, tagId: query.tagId };
    if (query.segmentId) filters.condition = await segmentCondition(db, workspaceId, query.segmentId);
    return filters;
  }

  return {
    /**
     * Checks what can fail before the first byte (an unknown segment is a 404, not a cut stream), then
     * returns the writer of the CSV: the header from the attribute keys found, then page after page in id
     * order, waiting for the client to take each. Not a snapshot: a contact added or changed meanwhile
     * appears as it is when its page is read; an attribute key first written meanwhile has no column.
     */
    async csv(workspaceId: string, query: ContactExportQueryInput): Promise<(res: Response) => Promise<void>> {
      const filters = await filtersOf(workspaceId, query);
      const keys = await exportAttributeKeys(db, workspaceId, filters, audienceDb);
      return async (res) => {
        res.setHeader('content-type', 'text/csv; charset=utf-8');
        res.setHeader('content-disposition', 'attachment; filename="contacts.csv"');
        res.write(csvRecord(contactCsvHeader(keys)));
        for (let after: string | null = null; ; ) {
          const page = await exportPage(db, workspaceId, filters, after, CSV_PAGE, audienceDb);
          const text = page.map((row) => csvRecord(contactCsvFields(row, keys))).join('');
          if (text && !res.write(text)) await drained(res);
          if (page.length < CSV_PAGE) break;
          after = page[page.length - 1].id;
        }
        res.end();
      };
    },

    /** Everything held about one contact, for a data-subject request (access or portability). */
    async person(workspaceId: string, contactId: string) {
      const contact = await findContact(db, workspaceId, contactId);
      if (!contact) throw AppError.notFound('Contact');
      const { sections, truncated } = await contactData(db, workspaceId, contactId);
      const consent = Object.fromEntries(
        sections.identities.filter((identity) => identity.primary === true).map((identity) => [identity.channel, identity.consent]),
      );
      return {
        exportedAt: new Date().toISOString(),
        contact: { id: contact.id, createdAt: contact.createdAt.toISOString(), updatedAt: contact.updatedAt.toISOString() },
        attributes: contact.attributes,
        consent,
        ...sections,
        limits: CONTACT_EXPORT_LIMITS,
        truncated,
      };
    },
  };
}

export type ContactExports = ReturnType<typeof createContactExports>;
