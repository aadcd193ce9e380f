/**
 * Whether a parsed JSON value nests deeper than `max` arrays/objects. Iterative: a hostile
 * `[[[[…]]]]` of a megabyte is measured without recursion, so the check cannot overflow the stack that the
 * validators downstream (recursive) would.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (depth + 1 > max) return true
    const children = Array.isArray(node) ? node : Object.values(node)
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
  }
  return false
}
