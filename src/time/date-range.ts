import type { ErrorCodeName } from '../../schemas/error.js'
import { ceilMs, isBefore, parseRfc3339 } from './rfc3339.js'

export interface DateRange {
  /** The window in whole milliseconds: startMs <= date_time < endMs. */
  startMs: number
  endMs: number
}

/**
 * The window of a start and an optional end date at `now`, or the 403 that refuses them: the
 * start must be a date-time earlier than now, the end (now when absent) one earlier than now and
 * later than the start.
 */
export function dateRangeOf (startText: string | undefined, endText: string | undefined, now: number): DateRange | ErrorCodeName {
  const start = parseRfc3339(startText ?? '')
  if (start === undefined || start.epochMs >= now) return 'invalid_start_date'
  if (endText === undefined) return { startMs: ceilMs(start), endMs: now }
  const end = parseRfc3339(endText)
  if (end === undefined || end.epochMs >= now || !isBefore(start, end)) return 'invalid_end_date'
  return { startMs: ceilMs(start), endMs: ceilMs(end) }
}
