import { DAY_MS } from '../time/rfc3339.js'
import type { Random } from './random.js'

export { DAY_MS }
export const HOUR_MS = 3_600_000

/** When in the (local) day things start happening. */
export type Rhythm = 'office' | 'cleaning'

/** Relative weight of each local hour, 0 to 23. */
const HOURLY_WEIGHTS: Readonly<Record<Rhythm, readonly number[]>> = {
  // People use restrooms and meeting rooms in office hours, most between 8 and 17.
  office: [1, 1, 1, 1, 1, 2, 4, 8, 12, 12, 12, 12, 12, 12, 12, 12, 11, 9, 6, 4, 3, 2, 2, 1],
  // Machines clean before and after office hours.
  cleaning: [2, 2, 2, 2, 3, 8, 12, 10, 6, 3, 2, 2, 2, 2, 2, 2, 3, 5, 9, 12, 11, 8, 4, 2]
}

const CUMULATIVE_WEIGHTS = Object.fromEntries(
  Object.entries(HOURLY_WEIGHTS).map(([rhythm, weights]) => {
    let total = 0
    return [rhythm, weights.map((weight) => (total += weight))]
  })
) as Record<Rhythm, number[]>

/** Weekdays are busier than weekends; the factors average 1 over a week, so the event rate holds. */
const WEEKDAY_FACTOR = 1.15
const WEEKEND_FACTOR = (7 - 5 * WEEKDAY_FACTOR) / 2

/** How much busier than average the day starting at dayStartMs is. */
export function dayFactor (dayStartMs: number): number {
  const weekday = new Date(dayStartMs + DAY_MS / 2).getUTCDay()
  return weekday === 0 || weekday === 6 ? WEEKEND_FACTOR : WEEKDAY_FACTOR
}

/**
 * A moment in [dayStartMs, dayStartMs + 1 day), with whole milliseconds, whose local hour follows
 * the rhythm. The period need not start at midnight: an hour falling outside it wraps around.
 */
export function momentInDay (random: Random, rhythm: Rhythm, dayStartMs: number, utcOffsetHours: number): number {
  const hour = random.weighted(CUMULATIVE_WEIGHTS[rhythm])
  const utcMidnight = Math.floor(dayStartMs / DAY_MS) * DAY_MS
  let moment = utcMidnight + (hour - utcOffsetHours) * HOUR_MS + random.int(HOUR_MS)
  while (moment < dayStartMs) moment += DAY_MS
  while (moment >= dayStartMs + DAY_MS) moment -= DAY_MS
  return moment
}
