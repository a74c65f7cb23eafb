// How deeply a parsed JSON value nests, measured without recursion. JSON.parse takes any depth, but every
// recursive walk after it (JSON.stringify, structured clone, a validator) overflows the stack on a value a
// hundred thousand levels deep, and a RangeError there reads as a server fault (a retryable 503) rather
// than the client's 400. Check this first, before anything recursive touches the value.
//
// | #   | value                                      | depth |
// |-----|--------------------------------------------|-------|
// | JD1 | null, boolean, number, string              | 0     |
// | JD2 | `[]`, `{}`                                 | 1     |
// | JD3 | an array or object: 1 + its deepest member | n     |

/** Whether `value` nests deeper than `max` levels (arrays and objects count one level each). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth + 1 > max) return true;
    for (const member of Array.isArray(item) ? item : Object.values(item)) pending.push([member, depth + 1]);
  }
  return false;
}
