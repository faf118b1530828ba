/**
 * Lines cut to the terminal's width, so a timeline reads one record a line in an 80-column window instead of
 * wrapping into a wall of text. Only a terminal gets cut lines (a pipe or a file keeps them whole), and
 * `--wide` keeps them whole there too. Colour codes take no columns, and a cut line ends its colour.
 */

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/y;

/** The width to cut to: the terminal's columns, or undefined for whole lines (not a terminal, or --wide). */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number }, wide: boolean): number | undefined {
  return !wide && stream.isTTY && stream.columns !== undefined && stream.columns > 20 ? stream.columns : undefined;
}

/** `line` cut to `width` visible columns, ending in `…` when cut; as it is when it fits or width is undefined. */
export function fitWidth(line: string, width: number | undefined): string {
  if (width === undefined || line.length <= width) return line;
  let out = '';
  let visible = 0;
  let coloured = false;
  for (let i = 0; i < line.length; ) {
    ANSI.lastIndex = i;
    const code = ANSI.exec(line);
    if (code) {
      out += code[0];
      coloured = code[0] !== '\u001b[0m';
      i += code[0].length;
      continue;
    }
    const char = String.fromCodePoint(line.codePointAt(i)!);
    if (visible === width - 1) {
      // Only cut when something visible follows: a line that fits exactly, colour codes aside, stays whole.
      if (visibleLength(line.slice(i)) > 1) return `${out}…${coloured ? '\u001b[0m' : ''}`;
    }
    out += char;
    visible++;
    i += char.length;
  }
  return out;
}

function visibleLength(text: string): number {
  // eslint-disable-next-line no-control-regex
  return [...text.replace(/\u001b\[[0-9;]*m/g, '')].length;
}
