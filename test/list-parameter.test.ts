import t from 'tap'
import { splitList } from '../src/http/list-parameter.js'

t.test('a list parameter: items trimmed, blanks and repeats dropped, first-seen order; one item as many', async (t) => {
  const cases: Array<[string | undefined, string[] | undefined]> = [
    [undefined, undefined],
    ['', []],
    ['   ', []],
    ['a', ['a']],
    [' a ', ['a']],
    ['a,b,a', ['a', 'b']],
    [' b , a ,b', ['b', 'a']],
    [',a,', ['a']],
    [',', []],
    ['a b', ['a b']]
  ]
  for (const [value, expected] of cases) t.same(splitList(value), expected, JSON.stringify(value))
})
