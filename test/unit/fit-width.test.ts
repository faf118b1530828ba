/** Pretty output fits the terminal: cut with …, colour codes free, whole lines for pipes and --wide. */
import { describe, expect, it } from 'vitest';
import { fitWidth, terminalWidth } from '../../src/cli/fit-width.js';

describe('fitWidth', () => {
  it('cuts a long line to the width, ending in …', () => {
    expect(fitWidth('14:10:26.789 weather → request tools/call get_weather #2', 30)).toBe('14:10:26.789 weather → reques…');
    expect(fitWidth('14:10:26.789 weather → request tools/call get_weather #2', 30)).toHaveLength(30);
  });
  it('leaves a line that fits, exactly or with room', () => {
    expect(fitWidth('exactly ten', 11)).toBe('exactly ten');
    expect(fitWidth('short', 80)).toBe('short');
    expect(fitWidth('x'.repeat(500), undefined)).toBe('x'.repeat(500));
  });
  it('does not count colour codes, and ends a colour it cuts', () => {
    const line = '\u001b[90m14:10:26.789\u001b[0m \u001b[36mweather\u001b[0m \u001b[32mresponse a long sentence\u001b[0m';
    expect(fitWidth(line, 80)).toBe(line);
    expect(fitWidth(line, 25)).toBe('\u001b[90m14:10:26.789\u001b[0m \u001b[36mweather\u001b[0m \u001b[32mres…\u001b[0m');
  });
  it('cuts only for a terminal, and not with --wide', () => {
    expect(terminalWidth({ isTTY: true, columns: 80 }, false)).toBe(80);
    expect(terminalWidth({ isTTY: true, columns: 80 }, true)).toBeUndefined();
    expect(terminalWidth({ isTTY: false }, false)).toBeUndefined();
  });
});
