/**
 * The next group of writes waiting together: the first, and those after it in order while the
 * group stays within `maxEvents` events (whole writes only; a larger write goes alone). The
 * memory store's group commit and the live plugin's publication each handle a group in a few
 * turns of the event loop whatever its size, so its size is what one turn costs.
 */
export function takeWriteGroup<T extends { readonly events: readonly unknown[] }> (waiting: readonly T[], maxEvents: number): { group: T[], rest: T[] } {
  if (waiting.length === 0) return { group: [], rest: [] }
  let count = waiting[0]!.events.length
  let taken = 1
  while (taken < waiting.length && count + waiting[taken]!.events.length <= maxEvents) count += waiting[taken++]!.events.length
  return { group: waiting.slice(0, taken), rest: waiting.slice(taken) }
}
