import t from 'tap'
import { nameRuleViolation } from '../plugins/query-rules.js'
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
