import type { Readable } from 'node:stream';
import { type CsvError, type Info, parse, type Parser } from 'csv-parse';
import type { RowError } from '../core/imports/rows';

/**
 * Reading an import's CSV file with csv-parse, from the start or from a checkpoint. Every record comes with
 * the byte offset and line just past it in the whole file, so a batch's checkpoint is exact. Records that
 * cannot be parsed (a stray quote) are skipped and reported with their line, never stopping the read. Mixed
 * line endings are not supported (the first one found is the record delimiter).
 */
export interface FilePosition {
  offset: number;
  line: number;
}

export type FileItem =
  | { kind: 'record'; record: string[]; line: number; end: FilePosition }
  | { kind: 'error'; error: RowError };

function parser(delimiter: string, fromStart: boolean): Parser {
  return parse({
    delimiter,
    // A byte-order mark can only open the file; a resumed read starts mid-file.
    bom: fromStart,
    info: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    // One runaway quoted field must not swallow the file into memory.
    max_record_size: 1024 * 1024,
  });
}

/** The file's records (and unreadable ones as errors) from `from`, which must be a record boundary. */
export async function* readRecords(stream: Readable, from: FilePosition, delimiter: string): AsyncGenerator<FileItem> {
  const csv = parser(delimiter, from.offset === 0);
  const skipped: RowError[] = [];
  csv.on('skip', (error: CsvError) => {
    skipped.push({ line: from.line + Number(error.lines ?? 0), message: `Unreadable row: ${error.message.split(' at line')[0]}` });
  });
  stream.on('error', (error) => csv.destroy(error));
  stream.pipe(csv);
  try {
    for await (const item of csv as AsyncIterable<{ record: string[]; info: Info }>) {
      while (skipped.length) yield { kind: 'error', error: skipped.shift() as RowError };
      const line = from.line + item.info.lines;
      yield { kind: 'record', record: item.record, line, end: { offset: from.offset + item.info.bytes, line } };
    }
    while (skipped.length) yield { kind: 'error', error: skipped.shift() as RowError };
  } finally {
    stream.unpipe(csv);
    stream.destroy();
  }
}

export interface FileShape {
  header: string[];
  /** Just past the header: where the first batch starts. */
  afterHeader: FilePosition;
  /** Rows after the header, unreadable ones included (they are processed, as failures). */
  rows: number;
}

/**
 * The counting pass: csv-parse over the whole file without handling rows (exact, quoted newlines included,
 * at a few hundred thousand rows a second). Null for a file with no header.
 */
export async function countRows(stream: Readable, delimiter: string, onProgress: (rows: number) => void): Promise<FileShape | null> {
  let header: string[] | null = null;
  let afterHeader: FilePosition = { offset: 0, line: 0 };
  let rows = 0;
  for await (const item of readRecords(stream, { offset: 0, line: 0 }, delimiter)) {
    if (item.kind === 'record' && header === null) {
      header = item.record.map((column) => column.trim());
      afterHeader = item.end;
      continue;
    }
    rows += 1;
    if (rows % 10_000 === 0) onProgress(rows);
  }
  return header ? { header, afterHeader, rows } : null;
}
