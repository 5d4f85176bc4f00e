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

/** The days of a month (1 to 12) of a year, in the proleptic Gregorian calendar. */
export function daysInMonth (year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!
}

/** The value of the decimal digit at text[i], or NaN. */
function digitAt (text: string, i: number): number {
  const code = text.charCodeAt(i) - 0x30
  return code >= 0 && code <= 9 ? code : NaN
}

/**
 * The wire form, `2026-11-20T10:00:00.000Z` (24 characters, upper-case T and Z, milliseconds), read
 * without the regular expression: every stored event and most query dates have it, and loading a
 * million events spent over a second in the expression (profile in BENCHMARKS.md). Any other form,
 * or anything this does not accept, goes the general way.
 */
function parseWireForm (text: string): Instant | undefined {
  if (text.length !== 24 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(10) !== 0x54 ||
    text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a || text.charCodeAt(19) !== 0x2e || text.charCodeAt(23) !== 0x5a) return undefined
  const year = digitAt(text, 0) * 1000 + digitAt(text, 1) * 100 + digitAt(text, 2) * 10 + digitAt(text, 3)
  const month = digitAt(text, 5) * 10 + digitAt(text, 6)
  const day = digitAt(text, 8) * 10 + digitAt(text, 9)
  const hour = digitAt(text, 11) * 10 + digitAt(text, 12)
  const minute = digitAt(text, 14) * 10 + digitAt(text, 15)
  const second = digitAt(text, 17) * 10 + digitAt(text, 18)
  const millis = digitAt(text, 20) * 100 + digitAt(text, 21) * 10 + digitAt(text, 22)
  // NaN (a non-digit) fails every comparison below. Date.UTC reads years below 100 as 19xx: those go the general way.
  if (!(year >= 100 && month >= 1 && month <= 12 && day >= 1 && hour <= 23 && minute <= 59 && second <= 59 && millis >= 0)) return undefined
  const monthDays = daysInMonth(year, month)
  if (day > monthDays) return undefined
  return { epochMs: utcMs(year, month, day, hour, minute, second, millis), subMillisecond: 0 }
}

const DAYS_BEFORE_MONTH = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]

/**
 * Date.UTC of a checked civil date and time (month 1 to 12, year 100 or later), by arithmetic:
 * Date.UTC was a fifth of a line's scan when loading, and most of a query date's parse.
 */
export function utcMs (year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number): number {
  // Days since 1970-01-01 of the year's first day (proleptic Gregorian), then of the date.
  const y = year - 1
  const yearDays = 365 * (year - 1970) + (Math.floor(y / 4) - Math.floor(y / 100) + Math.floor(y / 400)) - 477
  const days = yearDays + DAYS_BEFORE_MONTH[month - 1]! + (month > 2 && isLeapYear(year) ? 1 : 0) + day - 1
  return days * DAY_MS + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis
}

export function parseRfc3339 (text: string): Instant | undefined {
  const wire = parseWireForm(text)
  if (wire !== undefined) return wire
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
  const monthDays = daysInMonth(year, month)
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

/** The last text parseEventTime read, and its answer: a loaded line's time is read twice in a row (its check, then its value). */
let lastText = ''
let lastEpochMs: number | undefined

export function parseEventTime (text: string): number | undefined {
  if (text === lastText) return lastEpochMs
  const instant = parseRfc3339(text)
  const epochMs = instant === undefined || instant.epochMs < EVENT_TIME_MIN_MS || instant.epochMs >= EVENT_TIME_MAX_MS ? undefined : instant.epochMs
  lastText = text
  lastEpochMs = epochMs
  return epochMs
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
