import t from 'tap'
import { collectLoadGarbage } from '../src/store/memory/collect-load-garbage.js'

const withGc = globalThis as { gc?: () => void }

t.test('with --expose-gc, one full collection', async (t) => {
  const original = withGc.gc
  t.teardown(() => { withGc.gc = original })
  let calls = 0
  withGc.gc = () => { calls++ }
  t.equal(collectLoadGarbage(), true)
  t.equal(calls, 1)
})

t.test('without it, nothing happens', async (t) => {
  const original = withGc.gc
  t.teardown(() => { withGc.gc = original })
  delete withGc.gc
  t.equal(collectLoadGarbage(), false)
})
