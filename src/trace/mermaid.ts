/**
 * `view --format mermaid`: the timeline as a Mermaid `sequenceDiagram` — paste it into a Markdown file on GitHub,
 * or into mermaid.live, and the round trip is drawn. Pure: a Timeline in, text out.
 */
import type { Timeline } from './timeline.js';

/** The diagram's source text, one statement per line. */
export function formatMermaid(timeline: Timeline): string {
  const alias = new Map(timeline.participants.map((p, i) => [p.id, aliasOf(p.kind, i)]));
  const lines = ['sequenceDiagram'];
  for (const p of timeline.participants) {
    lines.push(`  ${p.kind === 'user' ? 'actor' : 'participant'} ${alias.get(p.id)} as ${escapeText(p.name)}`);
  }
  for (const s of timeline.steps) {
    const from = alias.get(s.from)!;
    const to = alias.get(s.to)!;
    const text = escapeText(s.text);
    if (s.style === 'note') lines.push(`  Note over ${from}: ${text}`);
    else lines.push(`  ${from}${ARROWS[s.style]}${to}: ${text}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Solid arrows for requests, dashed for replies, a cross for a reply that failed. */
const ARROWS = { request: '->>', reply: '-->>', error: '--x' } as const;

function aliasOf(kind: string, index: number): string {
  return `${kind[0]!.toUpperCase()}${index}`;
}

const ENTITIES: Record<string, string> = { '#': '#35;', ';': '#59;', '<': '#lt;', '>': '#gt;' };

/**
 * Mermaid reads `;` and `#` in message text as syntax (statement end, entity code), drops `<…>` as HTML, and a
 * newline ends the statement: replace them with Mermaid's own entity codes, and whitespace runs with one space.
 */
export function escapeText(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[#;<>]/g, (c) => ENTITIES[c]!);
}
