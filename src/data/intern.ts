/**
 * One string object per distinct identifier in the process. Millions of events name a few
 * thousand entities and codes; the memory store and the entity registry both keep theirs through
 * here, so an event's device_id and the registry's key are the same object, and the registry's
 * Map lookup for every event of an answer compares pointers instead of the contents of two
 * strings that are rarely in the CPU cache. Bounded by the number of distinct identifiers.
 */
const strings = new Map<string, string>()

export function intern (value: string): string {
  const kept = strings.get(value)
  if (kept !== undefined) return kept
  strings.set(value, value)
  return value
}

/** How many distinct strings are interned (for tests of what may grow it). */
export function internedCount (): number {
  return strings.size
}
