/**
 * The order of every answer: date_time, then message_id by UTF-16 code units (JavaScript's own
 * string order). Wire date_times are fixed-width UTC (`2026-01-01T00:00:00.000Z`, years 1678 to
 * 2261), so their text order is their time order.
 */
export function compareMessageIds (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export function compareEvents (aTime: string, aId: string, bTime: string, bId: string): number {
  if (aTime !== bTime) return aTime < bTime ? -1 : 1
  return compareMessageIds(aId, bId)
}
