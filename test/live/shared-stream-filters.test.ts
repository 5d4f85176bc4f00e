import t from 'tap'
import { SharedStreamFilters, streamFilterKey } from '../../src/live/shared-stream-filters.js'
import type { StreamFilter } from '../../src/live/stream-subscribers.js'

const devices = Array.from({ length: 5000 }, (_, i) => `device-${i}`)
const filterOf = (ids: string[], codes?: string[]): StreamFilter => ({
  entities: { deviceIds: new Set(ids), spaceIds: new Set(['s1']) },
  messageCodes: codes === undefined ? undefined : new Set(codes)
})

t.test('streams asking for the same events share one filter object, under a short key', async (t) => {
  const filters = new SharedStreamFilters()
  const first = filters.shared(filterOf(devices, ['A', 'B']))
  // The same events asked for in another order: the same filter.
  const again = filters.shared(filterOf([...devices].reverse(), ['B', 'A']))
  t.equal(again.filter, first.filter, 'the filter held is given, the new one let go')
  t.equal(again.key, first.key)
  t.ok(first.key.length <= 44, `a digest, not the IDs (${first.key.length} characters)`)
  const other = filters.shared(filterOf(devices, ['A']))
  t.not(other.key, first.key)
  t.not(other.filter, first.filter)
  t.equal(filters.size, 2)
  t.not(streamFilterKey({ entities: undefined, category: 'alert' }), streamFilterKey({ entities: undefined, messageCodes: new Set(['alert']) }), 'a category is not a code')
  t.not(streamFilterKey({ entities: { deviceIds: new Set(['x']), spaceIds: new Set() } }), streamFilterKey({ entities: undefined, scope: { deviceIds: new Set(['x']), spaceIds: new Set() } }), 'a selection is not a scope')
  const everything = filters.shared({ entities: undefined })
  t.equal(everything.key, '', 'every event: no key, nothing held')
  t.equal(filters.size, 2)
})

t.test('a filter no stream holds any more is forgotten', async (t) => {
  // A collection asked for (as --expose-gc gives it) without the flag on the test's command.
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const filters = new SharedStreamFilters()
  filters.shared(filterOf(devices.slice(0, 10)))
  t.equal(filters.size, 1)
  for (let i = 0; i < 20 && filters.size > 0; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  t.equal(filters.size, 0)
})
