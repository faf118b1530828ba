/**
 * `view --format mermaid`: the timeline as a Mermaid `sequenceDiagram` — paste it into a Markdown file on GitHub,
 * or into mermaid.live, and the round trip is drawn. Pure: a Timeline in, text out.
 */
import type { DrawnTimeline, Participant, TimelineStep } from './timeline.js';

/** The diagram's source text, one statement per line. */
export function formatMermaid(timeline: DrawnTimeline): string {
  const alias = new Map(timeline.participants.map((p, i) => [p.id, aliasOf(p.kind, i)]));
  const lines = ['sequenceDiagram'];
  for (const p of timeline.participants) lines.push(mermaidParticipant(p, alias.get(p.id)!));
  for (const s of timeline.steps) lines.push(mermaidStep(s, alias));
  return `${lines.join('\n')}\n`;
}

/** A participant's statement. */
export function mermaidParticipant(p: Participant, alias: string): string {
  return `  ${p.kind === 'user' ? 'actor' : 'participant'} ${alias} as ${escapeText(p.name)}`;
}

/** A step's statement: an arrow, or a note over one participant. */
export function mermaidStep(s: Pick<TimelineStep, 'from' | 'to' | 'text' | 'style'>, alias: ReadonlyMap<string, string>): string {
  const from = alias.get(s.from)!;
  const to = alias.get(s.to)!;
  const text = escapeText(s.text);
  return s.style === 'note' ? `  Note over ${from}: ${text}` : `  ${from}${ARROWS[s.style]}${to}: ${text}`;
}

/** Solid arrows for requests, dashed for replies, a cross for a reply that failed. */
const ARROWS = { request: '->>', reply: '-->>', error: '--x' } as const;

export function aliasOf(kind: string, index: number): string {
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
