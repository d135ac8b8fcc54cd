import { readFileSync } from 'node:fs';

/**
 * `tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]`: what grew between two V8 heap
 * snapshots (the soak writes them, bench/soak.ts), as the DevTools "Comparison" view would show it: objects
 * grouped by constructor (or by kind: strings, arrays, closures, code, system), their count and shallow size
 * in each, and the difference, largest growth first. Shallow sizes, not retained ones: a leak shows as a
 * constructor whose count keeps climbing from snapshot to snapshot, whatever holds it.
 *
 * Snapshots of a worker run to hundreds of MB, past V8's longest string, so the file is scanned as bytes:
 * the header is parsed as JSON, the `nodes` array number by number, the `strings` array token by token.
 */
interface Group {
  count: number;
  bytes: number;
}

const COMMA = 0x2c;
const CLOSE = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function sectionStart(file: Buffer, name: string): number {
  const at = file.indexOf(`"${name}":[`);
  if (at < 0) throw new Error(`not a heap snapshot: no "${name}" array`);
  return at + name.length + 4;
}

/** The integers of the array starting at `from`, up to its closing bracket. */
function readNumbers(file: Buffer, from: number, expected: number): Uint32Array {
  const out = new Uint32Array(expected);
  let n = 0;
  let value = 0;
  let inNumber = false;
  for (let i = from; i < file.length; i += 1) {
    const byte = file[i];
    if (byte >= 0x30 && byte <= 0x39) {
      value = value * 10 + (byte - 0x30);
      inNumber = true;
    } else {
      if (inNumber) out[n++] = value;
      value = 0;
      inNumber = false;
      if (byte === CLOSE) break;
    }
  }
  if (n !== expected) throw new Error(`expected ${expected} node fields, read ${n}`);
  return out;
}

/** The JSON strings of the array starting at `from`. */
function readStrings(file: Buffer, from: number): string[] {
  const strings: string[] = [];
  for (let i = from; i < file.length; i += 1) {
    const byte = file[i];
    if (byte === CLOSE) break;
    if (byte !== QUOTE) continue;
    let end = i + 1;
    while (file[end] !== QUOTE) end += file[end] === BACKSLASH ? 2 : 1;
    strings.push(JSON.parse(file.toString('utf8', i, end + 1)) as string);
    i = end;
    while (file[i + 1] !== COMMA && file[i + 1] !== CLOSE) i += 1;
  }
  return strings;
}

export function groupsOf(path: string): Map<string, Group> {
  const file = readFileSync(path);
  const headerEnd = file.indexOf('"nodes":[');
  const header = JSON.parse(`${file.toString('utf8', 0, headerEnd).trim().replace(/,$/, '')}}`) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] }; node_count: number };
  };
  const { meta, node_count: nodeCount } = header.snapshot;
  const width = meta.node_fields.length;
  const [typeField, nameField, sizeField] = ['type', 'name', 'self_size'].map((field) => meta.node_fields.indexOf(field));
  const types = meta.node_types[0];
  const nodes = readNumbers(file, sectionStart(file, 'nodes'), nodeCount * width);
  const strings = readStrings(file, sectionStart(file, 'strings'));
  const groups = new Map<string, Group>();
  for (let base = 0; base < nodes.length; base += width) {
    const type = types[nodes[base + typeField]];
    // Objects by constructor, as DevTools groups them; everything else by its kind.
    const key = type === 'object' || type === 'native' ? strings[nodes[base + nameField]] : type.includes('string') ? '(string)' : `(${type})`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += nodes[base + sizeField];
    groups.set(key, group);
  }
  return groups;
}

function main(): void {
  const [beforePath, afterPath, rowsArg] = process.argv.slice(2);
  if (!beforePath || !afterPath) throw new Error('usage: tsx bench/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]');
  const rows = Number(rowsArg ?? 25);
  const before = groupsOf(beforePath);
  const after = groupsOf(afterPath);
  const total = (groups: Map<string, Group>) => [...groups.values()].reduce((sum, g) => ({ count: sum.count + g.count, bytes: sum.bytes + g.bytes }), { count: 0, bytes: 0 });
  const empty = { count: 0, bytes: 0 };
  const diff = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
    const [b, a] = [before.get(key) ?? empty, after.get(key) ?? empty];
    return { key, b, a, count: a.count - b.count, bytes: a.bytes - b.bytes };
  });
  const kb = (bytes: number) => (bytes / 1024).toFixed(0).padStart(10);
  const line = (name: string, b: Group, a: Group) =>
    `  ${name.slice(0, 48).padEnd(48)} ${String(b.count).padStart(9)} ${String(a.count).padStart(9)} ${String(a.count - b.count).padStart(8)} ${kb(b.bytes)} ${kb(a.bytes)} ${kb(a.bytes - b.bytes)}`;
  console.log(`  ${'constructor / kind'.padEnd(48)} ${'count'.padStart(9)} ${'then'.padStart(9)} ${'Δ'.padStart(8)} ${'KB'.padStart(10)} ${'then'.padStart(10)} ${'Δ KB'.padStart(10)}`);
  console.log(line('(all)', total(before), total(after)));
  for (const row of diff.sort((x, y) => y.bytes - x.bytes).slice(0, rows)) console.log(line(row.key, row.b, row.a));
  console.log('  ... largest growth in count:');
  for (const row of diff.sort((x, y) => y.count - x.count).slice(0, Math.ceil(rows / 2))) console.log(line(row.key, row.b, row.a));
}

if (require.main === module) main();
