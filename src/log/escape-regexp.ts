/** `text` as regular-expression source that matches it literally (outside a character class). */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
