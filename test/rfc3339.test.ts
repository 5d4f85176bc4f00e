import t from 'tap'
import fc from 'fast-check'
import { DAY_MS, ceilMs, daysInMonth, formatEventTime, isBefore, parseEventTime, parseRfc3339, utcMs } from '../src/time/rfc3339.js'

t.test('valid date-times', async (t) => {
  const valid: Array<[string, string]> = [
    ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20t10:00:00z', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20T10:00:00.5Z', '2026-11-20T10:00:00.500Z'],
    ['2026-11-20T10:00:00.123999Z', '2026-11-20T10:00:00.123Z'],
    ['2026-11-20T11:30:00+01:30', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20T11:30:00 01:30', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20T05:00:00-05:00', '2026-11-20T10:00:00.000Z'],
    ['2026-11-20T10:00:00-00:00', '2026-11-20T10:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2024-12-31T23:59:59.999Z', '2024-12-31T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z']
  ]
  for (const [text, utc] of valid) t.equal(new Date(parseRfc3339(text)!.epochMs).toISOString(), utc, text)
})

t.test('invalid date-times', async (t) => {
  for (const text of [
    '', '2026-11-20', '2026-11-20T10:00Z', '2026-11-20T10:00:00', '2026-11-20 10:00:00Z', '2026-11-20T10:00:00.Z',
    '1900-02-29T00:00:00Z', '2026-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-01T00:00:00Z',
    '2026-01-00T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-12-31T23:59:60Z', '2026-01-01T00:00:00+1:00',
    '2026-01-01T00:00:00+01:60', '+02026-01-01T00:00:00Z', '２０２６-01-01T00:00:00Z', '2026-01-01T00:00:00Z\n'
  ]) t.equal(parseRfc3339(text), undefined, JSON.stringify(text))
})

t.test('sub-millisecond precision decides the bounds', async (t) => {
  const a = parseRfc3339('2026-01-01T00:00:00.0001Z')!
  const b = parseRfc3339('2026-01-01T00:00:00.0002Z')!
  const whole = parseRfc3339('2026-01-01T00:00:00.000Z')!
  t.equal(ceilMs(a), whole.epochMs + 1, 'a start just after a millisecond excludes it')
  t.equal(ceilMs(whole), whole.epochMs)
  t.ok(isBefore(a, b))
  t.notOk(isBefore(b, a))
  t.notOk(isBefore(a, a))
  t.ok(isBefore(whole, a))
})

t.test('event times are limited to what every store can hold', async (t) => {
  t.equal(parseEventTime('1677-12-31T23:59:59Z'), undefined)
  t.equal(parseEventTime('1678-01-01T00:00:00Z'), Date.UTC(1678, 0, 1))
  t.equal(parseEventTime('2261-12-31T23:59:59.999Z'), Date.UTC(2262, 0, 1) - 1)
  t.equal(parseEventTime('2262-01-01T00:00:00Z'), undefined)
  t.equal(formatEventTime(Date.UTC(2026, 10, 20, 10)), '2026-11-20T10:00:00.000Z')
})

t.test('event times are written exactly as toISOString writes them', async (t) => {
  const samples = [0, -1, -86_400_001, 1, 999, 86_399_999, Date.UTC(1678, 0, 1), Date.UTC(2262, 0, 1) - 1, Date.UTC(2024, 1, 29, 23, 59, 59, 999)]
  let seed = 7
  for (let i = 0; i < 20_000; i++) {
    seed = (seed * 48271) % 2147483647
    samples.push(Date.UTC(1678, 0, 1) + Math.floor((seed / 2147483647) * (Date.UTC(2262, 0, 1) - Date.UTC(1678, 0, 1))))
  }
  const wrong = samples.filter((ms) => formatEventTime(ms) !== new Date(ms).toISOString())
  t.same(wrong, [], `${samples.length} instants from 1678 to 2261`)
})

t.test('the wire form is read without the expression, and reads as the expression reads it', async (t) => {
  const fc = (await import('fast-check')).default
  // Any instant the stores can hold: its wire form reads back to it.
  fc.assert(fc.property(fc.integer({ min: Date.UTC(1678, 0, 1), max: Date.UTC(2262, 0, 1) - 1 }), (ms) => {
    t.equal(parseRfc3339(formatEventTime(ms))?.epochMs, ms)
  }), { numRuns: 2000 })
  // Any 24 characters shaped like it, digits or not, valid or not: the same answer as the general
  // way gives the same text with a lower-case t and z (which only the expression reads).
  const digitOrNot = fc.constantFrom('0', '1', '2', '3', '5', '9', 'x', ' ', '-')
  const twoDigits = fc.tuple(digitOrNot, digitOrNot).map(([a, b]) => a + b)
  const shaped = fc.tuple(fc.constantFrom('2024', '2026', '1900', '2000', '0099', '1x00'), fc.constantFrom('01', '02', '04', '12', '13', '00', 'x1'), twoDigits, twoDigits, twoDigits, twoDigits, fc.tuple(digitOrNot, digitOrNot, digitOrNot))
    .map(([y, mo, d, h, mi, s, [a, b, c]]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${a}${b}${c}Z`)
  fc.assert(fc.property(shaped, (text) => {
    const lower = text.replace('T', 't').replace('Z', 'z')
    t.same(parseRfc3339(text), parseRfc3339(lower), text)
  }), { numRuns: 5000 })
  for (const text of ['2024-02-29T12:00:00.000Z', '2026-02-29T12:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-01-01T24:00:00.000Z', '0099-01-01T00:00:00.000Z']) {
    t.same(parseRfc3339(text), parseRfc3339(text.toLowerCase()), text)
  }
})

t.test('utcMs is Date.UTC for every civil date and time from year 100 on', async (t) => {
  fc.assert(fc.property(
    fc.integer({ min: 100, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }),
    fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 999 }),
    (year, month, day, hour, minute, second, millis) => {
      const monthDays = new Date(Date.UTC(year, month, 0)).getUTCDate()
      fc.pre(day <= monthDays)
      return utcMs(year, month, day, hour, minute, second, millis) === Date.UTC(year, month - 1, day, hour, minute, second, millis)
    }), { numRuns: 20_000 })
  t.equal(utcMs(2024, 2, 29, 23, 59, 59, 999), Date.UTC(2024, 1, 29, 23, 59, 59, 999), 'a leap day')
  t.equal(utcMs(1969, 12, 31, 0, 0, 0, 0), Date.UTC(1969, 11, 31), 'before the epoch')
})

t.test('days in a month: as many as Date.UTC counts, leap years by the Gregorian rule, for every month events may fall in', async (t) => {
  let wrong = 0
  for (let year = 1678; year < 2262; year++) {
    for (let month = 1; month <= 12; month++) {
      const days = (Date.UTC(year, month, 1) - Date.UTC(year, month - 1, 1)) / DAY_MS
      if (daysInMonth(year, month) !== days) wrong++
    }
  }
  t.equal(wrong, 0)
  t.same([daysInMonth(1900, 2), daysInMonth(2000, 2), daysInMonth(2024, 2), daysInMonth(2025, 2), daysInMonth(2025, 4)], [28, 29, 29, 28, 30])
})
