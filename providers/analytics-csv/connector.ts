import { parse } from 'csv-parse/sync';
import { type AnalyticsConnector, ConnectorError, type ConversionPage, type SyncWindow } from '../../core/analytics/connector';
import { checkCsvHeader, conversionOfCsvRow } from '../../core/analytics/csv-rows';

/** Rows per page: each page is recorded in one transaction. */
export const CSV_PAGE_ROWS = 500;

interface ParsedRow {
  record: string[];
  info: { lines: number };
}

/**
 * An uploaded CSV of conversions (core/analytics/csv-rows.ts has the columns) as a connector: the cursor
 * is the number of data rows already read. Each page parses the file again up to its own rows (the file is
 * at most the attachment limit, 10 MB) rather than keeping state between activity calls, so any worker can
 * take the next page after a restart. Rows outside the sync's window are skipped.
 */
export function csvConnector(load: () => Promise<Buffer>, pageSize = CSV_PAGE_ROWS): AnalyticsConnector {
  return {
    async fetchConversions(window: SyncWindow, cursor: string | null): Promise<ConversionPage> {
      const offset = cursor === null ? 0 : Number(cursor);
      let rows: ParsedRow[];
      try {
        // Records past this page are not parsed: the header, the rows before, the page, and one to tell whether more follow.
        const to = 1 + offset + pageSize + 1;
        rows = parse(await load(), { bom: true, skip_empty_lines: true, relax_column_count: true, info: true, to }) as unknown as ParsedRow[];
      } catch (error) {
        if (error instanceof ConnectorError) throw error;
        throw new ConnectorError('invalid', `The file is not CSV: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (rows.length === 0) throw new ConnectorError('invalid', 'line 1: the file is empty (a header row is needed)');
      const header = rows[0].record.map((name) => name.trim().toLowerCase());
      checkCsvHeader(header);
      const data = rows.slice(1 + offset, 1 + offset + pageSize);
      const conversions = data
        .map(({ record, info }) => conversionOfCsvRow(Object.fromEntries(header.map((name, index) => [name, record[index] ?? ''])), info.lines))
        .filter((conversion) => (!window.since || conversion.occurredAt >= window.since) && (!window.until || conversion.occurredAt <= window.until));
      const read = offset + data.length;
      return { conversions, nextCursor: read < rows.length - 1 ? String(read) : null, watermark: null };
    },
  };
}
