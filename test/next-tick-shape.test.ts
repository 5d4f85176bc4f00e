import { executionAsyncResource } from 'node:async_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t, { type Test } from 'tap'
import { keepNextTickShape } from '../src/runtime/next-tick-shape.js'

// Full collections on demand, and V8's own map comparison, without flags on tap's command line.
setFlagsFromString('--expose-gc')
const fullGc = runInNewContext('gc') as () => void
setFlagsFromString('--allow-natives-syntax')
// eslint-disable-next-line no-new-func
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean
setFlagsFromString('--no-allow-natives-syntax')

const nextTurn = async () => new Promise((resolve) => setImmediate(resolve))
const entryOfNextTick = async () => new Promise<object>((resolve) => process.nextTick(() => resolve(executionAsyncResource())))

/** Several full collections, in turns of their own, with no nextTick entry pending. */
async function collectFully (): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await nextTurn()
    fullGc()
  }
  await nextTurn()
}

/** The kept entry, checked, and then held only weakly here: whatever keeps it alive is the module. */
async function keptEntryWeakly (t: Test): Promise<WeakRef<object>> {
  const entry = await keepNextTickShape()
  if (entry === undefined) throw new Error('nothing was kept')
  t.same(Object.keys(entry), ['callback', 'args'], 'a queue entry: its callback and arguments')
  t.ok(Object.getOwnPropertySymbols(entry).some((key) => key.description === 'async_id_symbol'), 'with its async id')
  t.equal(await keepNextTickShape(), entry, 'a second call keeps the same entry')
  return new WeakRef(entry)
}

t.test('the module keeps a nextTick queue entry alive through full collections', async (t) => {
  const kept = await keptEntryWeakly(t)
  await collectFully()
  t.not(kept.deref(), undefined, 'nothing but the module holds it, and it survived')
})

t.test('entries queued after full collections are built with the kept entry\'s map', async (t) => {
  const kept = await keptEntryWeakly(t)
  // Queue entries as a serving process does, so that nextTick is optimised for their map.
  for (let i = 0; i < 1000; i++) process.nextTick(() => {})
  await collectFully()
  const fresh = await entryOfNextTick()
  const entry = kept.deref()
  if (entry === undefined) throw new Error('the kept entry was collected')
  t.ok(haveSameMap(entry, fresh), 'same hidden class: the chain of maps survived')
  t.notOk(haveSameMap(entry, {}), 'the comparison tells maps apart')
})
