import t from 'tap'
import { takeWriteGroup } from '../src/store/write-groups.js'

const call = (name: string, events: number) => ({ name, events: Array.from({ length: events }) })
const names = ({ group, rest }: { group: Array<{ name: string }>, rest: Array<{ name: string }> }) => ({ group: group.map(({ name }) => name), rest: rest.map(({ name }) => name) })

t.test('a write group takes whole writes in order while they fit, and at least the first', async (t) => {
  t.same(names(takeWriteGroup([], 10)), { group: [], rest: [] })
  t.same(names(takeWriteGroup([call('a', 3), call('b', 4), call('c', 3), call('d', 1)], 10)), { group: ['a', 'b', 'c'], rest: ['d'] }, 'exactly the bound')
  t.same(names(takeWriteGroup([call('a', 3), call('b', 8), call('c', 1)], 10)), { group: ['a'], rest: ['b', 'c'] }, 'stops at the first that does not fit: order kept')
  t.same(names(takeWriteGroup([call('big', 25), call('b', 1)], 10)), { group: ['big'], rest: ['b'] }, 'a larger write goes alone')
  t.same(names(takeWriteGroup([call('a', 0), call('b', 10), call('c', 0)], 10)), { group: ['a', 'b', 'c'], rest: [] })
})
