import t from 'tap'
import { nameRuleViolation } from '../plugins/query-rules.js'
import { Random } from '../src/demo/random.js'
import { readParameterNames } from '../src/http/query-parameter-names.js'
import { dateRangeOf } from '../src/time/date-range.js'

const known = new Set(['start_date', 'end_date', 'a', 'b', 'c'])
const exclusive = ['a', 'b', 'c']
const required = ['start_date']

t.test('name rules, first broken one wins', async (t) => {
  const cases: Array<[Array<string | undefined>, string | undefined]> = [
    [['start_date'], undefined],
    [['start_date', 'a'], undefined],
    [['x'], 'invalid_parameter'],
    [[undefined], 'invalid_parameter'],
    [['start_date', 'start_date', 'x'], 'invalid_parameter'],
    [['start_date', 'start_date'], 'duplicate_parameter'],
    [['a', 'a'], 'duplicate_parameter'],
    [[], 'missing_parameter'],
    [['a'], 'missing_parameter'],
    [['a', 'b'], 'missing_parameter'],
    [['start_date', 'a', 'b'], 'invalid_parameter_combination']
  ]
  for (const [names, wanted] of cases) t.equal(nameRuleViolation(names, known, required, exclusive), wanted, JSON.stringify(names))
  t.equal(nameRuleViolation([], known, [], exclusive), undefined, 'no parameter is fine where none is required')
})

/** What readParameterNames must answer, written the plain way: split on `&`, skip empty pairs, the name up to the first `=`, `+` is a space, then percent-decoding (undefined when it fails). */
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

t.test('parameter names of a raw query string, repeats and empty names kept, in order', async (t) => {
  const cases: Array<[string, Array<string | undefined>]> = [
    ['/svc/v2/events', []],
    ['/svc/v2/events?', []],
    ['/svc/v2/events?start_date=2026-01-01T00%3A00%3A00Z&device_ids=a,b', ['start_date', 'device_ids']],
    ['/x?a&b=&=c&&d=1=2&', ['a', 'b', '', 'd']],
    ['/x?a=1&a=2', ['a', 'a']],
    ['/x?st%61rt_date=1&a+b=2&c%2Bd=3', ['start_date', 'a b', 'c+d']],
    ['/x?%zz=1&ok=2', [undefined, 'ok']],
    ['/x?a=%zz&b=x+y', ['a', 'b']],
    ['/x?a?b=1', ['a?b']],
    ['/x?%E2%82%AC=1', ['€']]
  ]
  for (const [url, wanted] of cases) {
    t.same(readParameterNames(url), wanted, url)
    t.same(readParameterNames(url), namesByTheBook(url), `${url}: as the plain way reads it`)
  }
  // Random query strings over the characters that matter, against the plain way.
  const alphabet = ['a', 'b', '=', '&', '+', '%', '2', 'B', 'z', '?', '€']
  const generator = Random.stream(7, 'query parameter names')
  const random = (n: number) => generator.int(n)
  for (let i = 0; i < 5000; i++) {
    let url = '/x?'
    for (let k = random(12); k > 0; k--) url += alphabet[random(alphabet.length)]
    const names = readParameterNames(url)
    const wanted = namesByTheBook(url)
    if (JSON.stringify(names) !== JSON.stringify(wanted)) {
      t.same(names, wanted, url)
      return
    }
  }
  t.pass('5,000 random query strings read as the plain way reads them')
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
