/**
 * Where a JSON text first goes wrong, as a line and column, so a 422 about a blocks body can point at it.
 * V8's JSON.parse names the position for some mistakes only ("Unexpected token 'o', ... is not valid
 * JSON" has none), so the text is scanned here; it is only ever called on text JSON.parse refused.
 */
const LITERAL = /true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const SPACE = new Set([' ', '\t', '\n', '\r']);

function errorOffset(text: string): number | null {
  let at = 0;
  const fail = (): never => {
    throw at;
  };
  const skipSpace = () => {
    while (SPACE.has(text[at])) at += 1;
  };
  const string = () => {
    at += 1;
    while (at < text.length) {
      const char = text[at];
      if (char === '"') {
        at += 1;
        return;
      }
      if (char < ' ') fail();
      at += char === '\\' ? 2 : 1;
    }
    fail();
  };
  const sequence = (close: string, item: () => void) => {
    at += 1;
    skipSpace();
    if (text[at] === close) {
      at += 1;
      return;
    }
    for (;;) {
      item();
      skipSpace();
      if (text[at] === ',') at += 1;
      else if (text[at] === close) {
        at += 1;
        return;
      } else fail();
    }
  };
  const value = (): void => {
    skipSpace();
    const char = text[at];
    if (char === '{') {
      return sequence('}', () => {
        skipSpace();
        if (text[at] !== '"') fail();
        string();
        skipSpace();
        if (text[at] !== ':') fail();
        at += 1;
        value();
      });
    }
    if (char === '[') return sequence(']', value);
    if (char === '"') return string();
    LITERAL.lastIndex = at;
    const literal = LITERAL.exec(text);
    if (!literal) return fail();
    at += literal[0].length;
  };
  try {
    value();
    skipSpace();
    return at < text.length ? at : null;
  } catch (offset) {
    // A RangeError: nesting deeper than the stack; the position is then unknown.
    return typeof offset === 'number' ? offset : null;
  }
}

export function jsonErrorPosition(text: string): { line: number | null; column: number | null } {
  const offset = errorOffset(text);
  if (offset === null) return { line: null, column: null };
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: before[before.length - 1].length + 1 };
}
