/** A comma separated list parameter: items trimmed, blanks and repeats dropped, first-seen order kept. */
export function splitList (value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  // Most requests name one ID: no split, set and copy for it.
  if (!value.includes(',')) {
    const item = value.trim()
    return item === '' ? [] : [item]
  }
  const items = new Set<string>()
  for (const item of value.split(',')) {
    const trimmed = item.trim()
    if (trimmed !== '') items.add(trimmed)
  }
  return [...items]
}
