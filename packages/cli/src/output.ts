import pc from 'picocolors';

export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Colours only for a person at a terminal: stdout is a TTY, NO_COLOR (https://no-color.org) is unset or
 * empty, and the output is not machine output (--json). A pipe, a file or a script gets plain text.
 */
export function colorsWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv, json: boolean): boolean {
  return !json && stream.isTTY === true && !env.NO_COLOR;
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  /** Colours the already padded cell (padding is measured on the plain text, so colours never skew columns). */
  paint?: (cell: string, row: Row) => string;
}

/** Where every command writes: human lines and tables, or JSON documents with --json. */
export class Output {
  readonly color: Colors;

  constructor(
    readonly json: boolean,
    colors: boolean,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {
    this.color = pc.createColors(colors);
  }

  line(text = ''): void {
    this.stdout.write(`${text}\n`);
  }

  /** Notes for a person (progress, hints) go to stderr, so stdout stays the command's result. */
  note(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  /** One JSON document per call: a result, or one line of a followed stream (NDJSON). */
  data(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Label and value pairs, labels aligned: the shape of a single resource. */
  fields(pairs: Array<[string, string | number | boolean | null | undefined]>): void {
    const width = Math.max(...pairs.map(([label]) => label.length));
    for (const [label, value] of pairs) this.line(`${this.color.dim(label.padEnd(width))}  ${value ?? '-'}`);
  }

  table<Row>(rows: Row[], columns: Array<Column<Row>>): void {
    this.line(formatTable(rows, columns, this.color).join('\n'));
  }
}

/** An aligned table without borders (as kubectl and gh print them): a dim header, two spaces between columns. */
export function formatTable<Row>(rows: Row[], columns: Array<Column<Row>>, color: Colors): string[] {
  const cells = rows.map((row) => columns.map((column) => column.value(row)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((row) => row[i].length)));
  const last = columns.length - 1;
  // The last column is not padded: trailing spaces would wrap a long value (a DKIM key) for nothing.
  const pad = (text: string, i: number) => (i === last ? text : text.padEnd(widths[i]));
  const header = color.dim(columns.map((column, i) => pad(column.header, i)).join('  '));
  const body = rows.map((row, r) => columns.map((column, i) => (column.paint ? column.paint(pad(cells[r][i], i), row) : pad(cells[r][i], i))).join('  '));
  return [header, ...body];
}

/** Green for the good end of a status, red for the bad, yellow while it is on its way. */
export function paintStatus(color: Colors, status: string, text = status): string {
  if (['sent', 'delivered', 'verified', 'succeeded', 'queued', 'scheduled', 'duplicate', 'open', 'click'].includes(status)) {
    return ['queued', 'scheduled', 'duplicate'].includes(status) ? color.cyan(text) : color.green(text);
  }
  if (['failed', 'bounced', 'bounce', 'complained', 'complaint', 'canceled', 'missing'].includes(status)) return color.red(text);
  return color.yellow(text);
}
