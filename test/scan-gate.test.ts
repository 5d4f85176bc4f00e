import t from 'tap'
import { isScan, ScanGate } from '../src/store/influx/scan-gate.js'

/** A source of two values, the second once `hold` settles, logging when it starts and ends. */
function source (name: string, log: string[], hold: Promise<void>) {
  return async function * () {
    log.push(`${name} start`)
    yield `${name} 1`
    await hold
    yield `${name} 2`
    log.push(`${name} end`)
  }
}

async function drain<T> (iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const value of iterable) out.push(value)
  return out
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

t.test('a scan is narrowed by nothing but time and category; message_ids go to the index', async (t) => {
  const window = { startMs: 0, endMs: 1000 }
  t.equal(isScan({ ...window, entities: undefined }), true)
  t.equal(isScan({ ...window, entities: undefined, category: 'alert' }), true)
  t.equal(isScan({ ...window, entities: undefined, messageIds: new Set(['a']) }), false)
  t.equal(isScan({ ...window, entities: { deviceIds: new Set(['d']), spaceIds: new Set() } }), false)
  t.equal(isScan({ ...window, entities: { deviceIds: new Set(), spaceIds: new Set(['s']) } }), false)
  t.equal(isScan({ ...window, entities: undefined, messageCodes: new Set(['C1']) }), false)
})

t.test('scans beyond the limit wait their turn, first come first served', async (t) => {
  const gate = new ScanGate(1)
  const log: string[] = []
  let releaseA!: () => void
  const holdA = new Promise<void>((resolve) => { releaseA = resolve })
  const a = drain(gate.pass(source('a', log, holdA)))
  const b = drain(gate.pass(source('b', log, Promise.resolve())))
  const c = drain(gate.pass(source('c', log, Promise.resolve())))
  await tick()
  t.same(log, ['a start'], 'b and c wait while a runs')
  t.same(gate.load, { running: 1, waiting: 2 })
  releaseA()
  t.same(await a, ['a 1', 'a 2'])
  t.same(await b, ['b 1', 'b 2'])
  t.same(await c, ['c 1', 'c 2'])
  t.same(log, ['a start', 'a end', 'b start', 'b end', 'c start', 'c end'], 'one after the other, in order')
  t.same(gate.load, { running: 0, waiting: 0 }, 'every turn is given back')
})

t.test('up to the limit run side by side', async (t) => {
  const gate = new ScanGate(2)
  const log: string[] = []
  let release!: () => void
  const hold = new Promise<void>((resolve) => { release = resolve })
  const runs = [drain(gate.pass(source('a', log, hold))), drain(gate.pass(source('b', log, hold))), drain(gate.pass(source('c', log, hold)))]
  await tick()
  t.same(log, ['a start', 'b start'])
  release()
  await Promise.all(runs)
  t.same(gate.load, { running: 0, waiting: 0 })
})

t.test('a scan that fails or is left early gives its turn back', async (t) => {
  const gate = new ScanGate(1)
  const failing = gate.pass(async function * () {
    yield 1
    throw new Error('InfluxDB went away')
  })
  await t.rejects(drain(failing), /went away/)
  t.same(gate.load, { running: 0, waiting: 0 }, 'after a failure')

  const log: string[] = []
  const left = gate.pass(source('left', log, new Promise(() => {})))
  const waiting = drain(gate.pass(source('next', log, Promise.resolve())))
  t.same(await left.next(), { value: 'left 1', done: false })
  await left.return(undefined)
  t.same(await waiting, ['next 1', 'next 2'], 'the waiting scan runs once the first is left')
  t.same(gate.load, { running: 0, waiting: 0 })
})

t.test('a limit below one is refused', async (t) => {
  t.throws(() => new ScanGate(0), RangeError)
  t.throws(() => new ScanGate(1.5), RangeError)
})

t.test('a scan whose reader holds a batch beyond the hold limit gives its turn back, and still ends', async (t) => {
  const gate = new ScanGate(1, 50)
  const log: string[] = []
  const slow = gate.pass(source('slow', log, Promise.resolve()))[Symbol.asyncIterator]()
  t.same(await slow.next(), { value: 'slow 1', done: false })
  // The slow scan's reader keeps its first value; the next scan must not wait for it.
  const next = drain(gate.pass(source('next', log, Promise.resolve())))
  t.same(await next, ['next 1', 'next 2'], 'the next scan ran while the slow reader held its batch')
  t.same(gate.load, { running: 0, waiting: 0 }, 'the slow scan holds no turn')
  t.same(await slow.next(), { value: 'slow 2', done: false }, 'the slow scan goes on without a turn')
  t.same(await slow.next(), { value: undefined, done: true })
  t.same(gate.load, { running: 0, waiting: 0 }, 'its turn is not given back twice')
  t.same(log, ['slow start', 'next start', 'next end', 'slow end'])
})
