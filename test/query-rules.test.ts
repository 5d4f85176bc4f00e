import t from 'tap'
import { Random } from '../src/demo/random.js'
import { compileNameRules } from '../src/http/query-name-rules.js'
import { dateRangeOf } from '../src/time/date-range.js'

const rules = { known: ['start_date', 'end_date', 'a', 'b', 'c'], required: ['start_date'], exclusive: ['a', 'b', 'c'] }
const violation = compileNameRules(rules)

t.test('name rules, first broken one wins', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['/x?start_date=1', undefined],
    ['/x?start_date=1&a=2', undefined],
    ['/x?start_date=1&end_date=2&c', undefined],
    ['/x?x=1', 'invalid_parameter'],
    ['/x?%zz=1&start_date=1', 'invalid_parameter'],
    ['/x?start_date=1&start_date=2&x=3', 'invalid_parameter'],
    ['/x?start_date=1&start_date=2', 'duplicate_parameter'],
    ['/x?start_date=1&st%61rt_date=2', 'duplicate_parameter'],
    ['/x?a=1&a=2', 'duplicate_parameter'],
    ['/x', 'missing_parameter'],
    ['/x?', 'missing_parameter'],
    ['/x?a=1', 'missing_parameter'],
    ['/x?a=1&b=2', 'missing_parameter'],
    ['/x?start_date=1&a=1&b=2', 'invalid_parameter_combination'],
    ['/x?start_dat=1', 'invalid_parameter'],
    ['/x?start_datex=1', 'invalid_parameter'],
    ['/x?start+date=1', 'invalid_parameter']
  ]
  for (const [url, wanted] of cases) t.equal(violation(url), wanted, url)
  t.equal(compileNameRules({ ...rules, required: [] })('/x'), undefined, 'no parameter is fine where none is required')
  t.throws(() => compileNameRules({ ...rules, required: ['y'] }), /y is not one of the route's parameters/)
})

/** The names of a raw query string, the plain way: split on `&`, skip empty pairs, the name up to the first `=`, `+` is a space, then percent-decoding (undefined when it fails). */
function namesByTheBook (url: string): Array<string | undefined> {
  const mark = url.indexOf('?')
  if (mark === -1) return []
  return url.slice(mark + 1).split('&').filter((pair) => pair !== '').map((pair) => {
    const name = pair.split('=')[0]!.replaceAll('+', ' ')
    try {
      return decodeURIComponent(name)
    } catch {
      return undefined
    }
  })
}

/** The rules the plain way, on those names: any unknown, then a repeat, then a missing one, then two exclusive ones. */
function violationByTheBook (url: string): string | undefined {
  const names = namesByTheBook(url)
  if (names.some((name) => name === undefined || !rules.known.includes(name))) return 'invalid_parameter'
  if (new Set(names).size < names.length) return 'duplicate_parameter'
  if (rules.required.some((name) => !names.includes(name))) return 'missing_parameter'
  if (rules.exclusive.filter((name) => names.includes(name)).length > 1) return 'invalid_parameter_combination'
  return undefined
}

t.test('name rules on random query strings answer as the plain way does', async (t) => {
  // Pieces that make known names, near misses, escapes, separators and other characters.
  const pieces = ['a', 'b', 'c', 'start_date', 'end_date', 'start_', 'date', '=', '&', '&', '+', '%', '%61', '%2B', '2', 'B', 'z', '?', '€', 'x=1', '&a', '&b=1', '&start_date=1', '&c=2']
  const generator = Random.stream(7, 'query parameter names')
  const random = (n: number) => generator.int(n)
  const seen = new Set<string | undefined>()
  for (let i = 0; i < 20_000; i++) {
    let url = '/x?'
    for (let k = random(10); k > 0; k--) url += pieces[random(pieces.length)]
    const wanted = violationByTheBook(url)
    seen.add(wanted)
    if (violation(url) !== wanted) {
      t.equal(violation(url), wanted, url)
      return
    }
  }
  t.same([...seen].sort(), ['duplicate_parameter', 'invalid_parameter', 'invalid_parameter_combination', 'missing_parameter', undefined].sort(), 'every outcome was met')
})

t.test('date range at a fixed now', async (t) => {
  const now = Date.UTC(2026, 0, 1)
  t.same(dateRangeOf('2025-12-31T00:00:00Z', undefined, now), { startMs: now - 86_400_000, endMs: now }, 'end defaults to now')
  t.same(dateRangeOf('2025-12-31T00:00:00.0001Z', '2025-12-31T12:00:00.0001Z', now), { startMs: now - 86_400_000 + 1, endMs: now - 43_200_000 + 1 }, 'sub-millisecond bounds round up')
  t.equal(dateRangeOf('2026-01-01T00:00:00Z', undefined, now), 'invalid_start_date', 'start must be earlier than now')
  t.equal(dateRangeOf('2025-12-31T23:59:59.999Z', undefined, now) instanceof Object, true, 'a millisecond before now is fine')
  t.equal(dateRangeOf(undefined, undefined, now), 'invalid_start_date')
  t.equal(dateRangeOf('2025-12-31T00:00:00Z', '2026-01-01T00:00:00Z', now), 'invalid_end_date', 'end must be earlier than now')
  t.equal(dateRangeOf('2025-12-31T00:00:00.0002Z', '2025-12-31T00:00:00.0001Z', now), 'invalid_end_date', 'end must be later than start, to the digit')
})
