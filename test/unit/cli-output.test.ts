import pc from 'picocolors';
import { colorsWanted, formatTable } from '../../packages/cli/src/output';

const colors = pc.createColors(true);
const noColors = pc.createColors(false);
const strip = (text: string) => text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');

describe('cli output', () => {
  it('colours are wanted only on a terminal, without NO_COLOR and without --json', () => {
    expect(colorsWanted({ isTTY: true }, {}, false)).toBe(true);
    expect(colorsWanted({ isTTY: true }, { NO_COLOR: '1' }, false)).toBe(false);
    // no-color.org: an empty NO_COLOR does not turn colours off.
    expect(colorsWanted({ isTTY: true }, { NO_COLOR: '' }, false)).toBe(true);
    expect(colorsWanted({ isTTY: true }, {}, true)).toBe(false);
    expect(colorsWanted({}, {}, false)).toBe(false);
  });

  it('a table aligns its columns on the plain text, so coloured cells line up with plain ones', () => {
    const rows = [
      { name: 'spf', status: 'failed' },
      { name: 'dkim-long-name', status: 'verified' },
    ];
    const columns = (palette: typeof colors) => [
      { header: 'NAME', value: (row: (typeof rows)[number]) => row.name, paint: (cell: string) => palette.red(cell) },
      { header: 'STATUS', value: (row: (typeof rows)[number]) => row.status },
    ];
    const coloured = formatTable(rows, columns(colors), colors);
    expect(coloured.map(strip)).toEqual(['NAME            STATUS', 'spf             failed', 'dkim-long-name  verified']);
    expect(coloured[1]).not.toBe(strip(coloured[1]));
    expect(formatTable(rows, columns(noColors), noColors)).toEqual(coloured.map(strip));
  });
});
