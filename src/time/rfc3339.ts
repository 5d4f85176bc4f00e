/**
 * RFC 3339 date-times (section 5.6): `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
 * `T` and `Z` may be lower case, as the RFC allows. A space in place of the `+` of an offset is
 * read as `+`, because an unencoded `+` in a query string arrives as a space.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/

export interface Instant {
  /** Milliseconds since the epoch, rounded down. */
  epochMs: number
  /** The part of the fraction finer than a millisecond, in milliseconds (0 <= x < 1). */
  subMillisecond: number
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function isLeapYear (year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
}

export function parseRfc3339 (text: string): Instant | undefined {
  const match = RFC3339.exec(text)
  if (match === null) return undefined
  const [, y, mo, d, h, mi, s, fraction = '', zulu, sign, oh, om] = match
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h)
  const minute = Number(mi)
  const second = Number(s)
  if (month < 1 || month > 12 || day < 1) return undefined
  const monthDays = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!
  // Leap seconds (:60) are refused: no store here can hold them.
  if (day > monthDays || hour > 23 || minute > 59 || second > 59) return undefined
  let offsetMinutes = 0
  if (zulu === undefined) {
    const offsetHours = Number(oh)
    const offsetMins = Number(om)
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3).padEnd(3, '0')))
  return {
    epochMs: date.getTime() - offsetMinutes * 60_000,
    subMillisecond: fraction.length > 3 ? Number('0.' + fraction.slice(3)) : 0
  }
}

/** The first whole millisecond at or after the instant: `t >= instant` ⇔ `t >= ceilMs(instant)` for whole ms `t`. */
export function ceilMs (instant: Instant): number {
  return instant.subMillisecond > 0 ? instant.epochMs + 1 : instant.epochMs
}

/** True when `a` is strictly earlier than `b`. */
export function isBefore (a: Instant, b: Instant): boolean {
  return a.epochMs < b.epochMs || (a.epochMs === b.epochMs && a.subMillisecond < b.subMillisecond)
}

/**
 * Event times must fit every store: InfluxDB keeps nanoseconds since the epoch in a signed
 * 64-bit integer, which spans 1677-09-21 to 2262-04-11. Whole years inside that span are allowed.
 */
export const EVENT_TIME_MIN_MS = Date.UTC(1678, 0, 1)
export const EVENT_TIME_MAX_MS = Date.UTC(2262, 0, 1)

export function parseEventTime (text: string): number | undefined {
  const instant = parseRfc3339(text)
  if (instant === undefined) return undefined
  if (instant.epochMs < EVENT_TIME_MIN_MS || instant.epochMs >= EVENT_TIME_MAX_MS) return undefined
  return instant.epochMs
}

export const DAY_MS = 86_400_000
const datePrefixes = new Map<number, string>()

function twoDigits (n: number): string {
  return n < 10 ? '0' + n : '' + n
}

/**
 * The wire form of an event time: UTC with milliseconds, `2026-11-20T10:00:00.000Z`, exactly as
 * Date.prototype.toISOString writes it. Every event read from InfluxDB goes through here, so the
 * date part is cached per day and the time of day is plain arithmetic (several times faster).
 */
export function formatEventTime (epochMs: number): string {
  const day = Math.floor(epochMs / DAY_MS)
  let prefix = datePrefixes.get(day)
  if (prefix === undefined) {
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11)
    if (datePrefixes.size >= 100_000) datePrefixes.clear()
    datePrefixes.set(day, prefix)
  }
  let rest = epochMs - day * DAY_MS
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  return prefix + twoDigits(hours) + ':' + twoDigits(minutes) + ':' + twoDigits(seconds) + '.' +
    (millis < 10 ? '00' + millis : millis < 100 ? '0' + millis : '' + millis) + 'Z'
}
