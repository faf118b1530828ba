/**
 * The widest of many things, for lining up columns. A loop, not `Math.max(...list)`: spreading a list into a
 * call passes each item as an argument on the stack, and a log of 146,440 records overflowed it
 * (`mcptap view` failed with "Maximum call stack size exceeded").
 */
export function widest<T>(items: Iterable<T>, width: (item: T) => number, atLeast = 0): number {
  let max = atLeast;
  for (const item of items) {
    const w = width(item);
    if (w > max) max = w;
  }
  return max;
}
