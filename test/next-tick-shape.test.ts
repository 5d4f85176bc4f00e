import { executionAsyncResource } from 'node:async_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { keepNextTickShape } from '../src/runtime/next-tick-shape.js'

// A full collection on demand, and V8's own map comparison, without flags on tap's command line.
setFlagsFromString('--expose-gc')
const fullGc = runInNewContext('gc') as () => void
setFlagsFromString('--allow-natives-syntax')
// eslint-disable-next-line no-new-func
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean
setFlagsFromString('--no-allow-natives-syntax')

const nextTurn = async () => new Promise((resolve) => setImmediate(resolve))
const entryOfNextTick = async () => new Promise<object>((resolve) => process.nextTick(() => resolve(executionAsyncResource())))

t.test('keeps a nextTick queue entry alive through full collections, one for the process', async (t) => {
  const kept = new WeakRef(await keepNextTickShape())
  const entry = kept.deref()!
  t.same(Object.keys(entry), ['callback', 'args'], 'a queue entry: its callback and arguments')
  t.ok(Object.getOwnPropertySymbols(entry).some((key) => key.description === 'async_id_symbol'))
  t.equal(await keepNextTickShape(), entry, 'a second call keeps the same entry')
  await nextTurn()
  fullGc()
  await nextTurn()
  t.not(kept.deref(), undefined, 'nothing but the module holds it, and it survived')
})

t.test('entries queued after a full collection with none pending are built with the kept map', async (t) => {
  const kept = await keepNextTickShape()
  for (let i = 0; i < 1000; i++) process.nextTick(() => {})
  await nextTurn()
  fullGc()
  t.ok(haveSameMap(kept, await entryOfNextTick()), 'same hidden class: V8 did not rebuild the chain of maps')
  t.notOk(haveSameMap(kept, { callback: null, args: undefined }), 'the comparison tells maps apart')
})
