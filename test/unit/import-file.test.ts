import { Readable } from 'node:stream';
import { countRows, type FileItem, readRecords } from '../../activities/import-file';

/** Reads `bytes` from `from` in small chunks, as a ranged GET delivers them (chunk edges inside characters too). */
async function readFrom(bytes: Buffer, from: { offset: number; line: number }): Promise<FileItem[]> {
  const rest = bytes.subarray(from.offset);
  const chunks = Array.from({ length: Math.ceil(rest.length / 7) }, (_, i) => rest.subarray(i * 7, i * 7 + 7));
  const items: FileItem[] = [];
  for await (const item of readRecords(Readable.from(chunks), from, ',')) items.push(item);
  return items;
}

const records = (items: FileItem[]) => items.flatMap((item) => (item.kind === 'record' ? [{ record: item.record, line: item.line }] : []));

describe('reading an import file', () => {
  for (const newline of ['\n', '\r\n']) {
    const text = [
      '\uFEFFemail,name',
      'ä@example.com,"Zoë, the ""first"""',
      `b@example.com,"two${newline}lines"`,
      '',
      'c@example.com,Ünal',
      'd@example.com,last',
    ].join(newline);
    const bytes = Buffer.from(text);

    it(`resuming at any record's end reads exactly the records after it, with the file's line numbers (${JSON.stringify(newline)})`, async () => {
      const all = await readFrom(bytes, { offset: 0, line: 0 });
      // csv-parse counts a CRLF inside a quoted field as two lines: later line numbers are one higher there.
      const shift = newline === '\r\n' ? 1 : 0;
      expect(records(all)).toEqual([
        { record: ['email', 'name'], line: 1 },
        { record: ['ä@example.com', 'Zoë, the "first"'], line: 2 },
        { record: ['b@example.com', `two${newline}lines`], line: 4 + shift },
        { record: ['c@example.com', 'Ünal'], line: 6 + shift },
        { record: ['d@example.com', 'last'], line: 7 + shift },
      ]);
      for (const [index, item] of all.entries()) {
        if (item.kind !== 'record') continue;
        const resumed = await readFrom(bytes, item.end);
        expect(records(resumed)).toEqual(records(all.slice(index + 1)));
      }
    });
  }

  it('an unreadable row is reported with its line and the rows after it are still read', async () => {
    const items = await readFrom(Buffer.from('email,name\n"a@example.com"x,1\nb@example.com,2\n'), { offset: 0, line: 0 });
    expect(items.filter((item) => item.kind === 'error')).toEqual([]);
    expect(records(items).map((item) => item.record[0])).toEqual(['email', '"a@example.com"x', 'b@example.com']);
    const unclosed = await readFrom(Buffer.from('email,name\nb@example.com,2\n"c@example.com,3\n'), { offset: 0, line: 0 });
    expect(unclosed.filter((item) => item.kind === 'error')).toEqual([{ kind: 'error', error: { line: 3, message: expect.stringMatching(/^Unreadable row: /) } }]);
  });

  it('the counting pass counts rows after the header, unreadable ones included, and ends past the header', async () => {
    const shape = await countRows(Readable.from([Buffer.from('\uFEFFemail\na@example.com\n"b\n')]), ',', () => undefined);
    expect(shape).toEqual({ header: ['email'], afterHeader: { offset: 9, line: 1 }, rows: 2 });
    expect(await countRows(Readable.from([]), ',', () => undefined)).toBeNull();
  });
});
