import t from 'tap'
import type { Message } from '../schemas/message.js'
import { Random } from '../src/demo/random.js'
import { entityNumber } from '../src/data/entity-numbers.js'
import type { StoredEvent } from '../src/data/event-lines.js'
import { EntityRegistry } from '../src/registry/entity-registry.js'
import { compareMessageIds } from '../src/store/event-order.js'
import type { EventBatch, EventQuery, EventStore } from '../src/store/event-store.js'
import { encodeMessageList } from '../src/store/message-json.js'
import { keepStoreContract, StoreContractError } from '../src/store/store-contract.js'

const T0 = Date.UTC(2025, 0, 1)
const at = (ms: number) => new Date(T0 + ms).toISOString()
const message = (id: string, ms: number, device = 'd1'): Message =>
  ({ message_id: id, message_code: 'C', message_category: 'alert', date_time: at(ms), device_id: device, space_id: 's1' })
const known = { knowsEntityOf: (event: Pick<Message, 'device_id' | 'space_id'>) => event.device_id !== 'ghost' }
const everything: EventQuery = { startMs: T0, endMs: T0 + 1000, entities: undefined }

/** A store that yields the given batches, whatever it is asked, and counts the questions. */
function storeYielding (batches: EventBatch[]): EventStore & { asked: number } {
  return {
    kind: 'test',
    asked: 0,
    async * queryEvents () {
      this.asked++
      yield * batches
    },
    async health () { return { ready: true } },
    async writeEvents () { throw new Error('not written to here') },
    async close () {}
  }
}

async function ids (batches: AsyncIterable<EventBatch> | Iterable<EventBatch>): Promise<string[]> {
  const found: string[] = []
  for await (const batch of batches) for (const m of batch.messages) found.push(m.message_id)
  return found
}

t.test('a batch that breaks no rule is passed on as it is', async (t) => {
  const batch = { messages: [message('a', 1), message('b', 1), message('a', 2)] }
  const out: EventBatch[] = []
  for await (const b of keepStoreContract(storeYielding([batch]), everything, known)) out.push(b)
  t.equal(out.length, 1)
  t.equal(out[0], batch, 'the same object')
})

t.test('unknown entities, events outside the window or the filters, and repeats are dropped', async (t) => {
  const store = storeYielding([
    { messages: [message('early', -1), message('a', 1), message('a', 1), message('ghost-1', 2, 'ghost')] },
    { messages: [message('b', 3), message('b', 3), message('other-device', 4, 'd2'), message('late', 1000)] }
  ])
  t.same(await ids(keepStoreContract(store, { ...everything, entities: { deviceIds: new Set(['d1']), spaceIds: new Set() } }, known)), ['a', 'b'])
})

t.test('the encoded JSON of a kept event stays with it when others are dropped', async (t) => {
  const messages = [message('ghost-1', 1, 'ghost'), message('a', 2), message('ghost-2', 3, 'ghost'), message('b', 4)]
  const { bytes, offsets } = encodeMessageList(messages)
  const batch = { messages, encoded: { bytes, offsets, positions: [0, 1, 2, 3] } }
  const out: EventBatch[] = []
  for await (const b of keepStoreContract(storeYielding([batch]), everything, known)) out.push(b)
  t.same(out[0]!.messages.map((m) => m.message_id), ['a', 'b'])
  const { positions } = out[0]!.encoded!
  t.same(positions.map((p) => JSON.parse(bytes.subarray(offsets[p], offsets[p + 1]).toString()).message_id), ['a', 'b'])
})

t.test('an event out of order fails the answer, within a batch or across batches', async (t) => {
  for (const batches of [
    [{ messages: [message('a', 2), message('b', 1)] }],
    [{ messages: [message('b', 1)] }, { messages: [message('a', 1)] }]
  ]) {
    await t.rejects(ids(keepStoreContract(storeYielding(batches), everything, known)), StoreContractError)
  }
})

t.test('a query that cannot match is not asked of the store', async (t) => {
  const store = storeYielding([{ messages: [message('a', 1)] }])
  const empty = new Set<string>()
  for (const query of [
    { ...everything, endMs: everything.startMs },
    { ...everything, entities: { deviceIds: empty, spaceIds: empty } },
    { ...everything, messageIds: empty },
    { ...everything, messageCodes: empty }
  ]) t.same(await ids(keepStoreContract(store, query, known)), [])
  t.equal(store.asked, 0)
  t.same(await ids(keepStoreContract(store, everything, known)), ['a'])
  t.equal(store.asked, 1)
})

t.test('batches with their facts are checked by number exactly as by text (random answers, queries and registries)', async (t) => {
  // A small world: devices d0..d5 in spaces s0..s2, some of them unknown to the registry.
  const registry = new EntityRegistry({
    spaces: [{ id: 's0' }, { id: 's1' }],
    devices: [{ id: 'd0', space_id: 's0' }, { id: 'd1', space_id: 's0' }, { id: 'd2', space_id: 's1' }, { id: 'd3', space_id: 's1' }],
    tags: []
  } as never)
  const generator = Random.stream(11, 'store contract by number')
  const random = (n: number) => generator.int(n)
  const pick = <T>(values: readonly T[]): T => generator.pick(values)
  const someOf = (values: readonly string[]) => new Set(values.filter(() => random(3) === 0))
  const selection = () => random(3) === 0 ? undefined : { deviceIds: someOf(['d0', 'd1', 'd2', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10']), spaceIds: someOf(['s0', 's1', 's2']) }
  const outcome = async (batches: EventBatch[], query: EventQuery): Promise<string> => {
    try {
      const kept: string[] = []
      for await (const batch of keepStoreContract(storeYielding(batches), query, registry)) {
        batch.messages.forEach((m, i) => kept.push(`${m.message_id}@${m.date_time}:${batch.encoded?.positions[i]}`))
      }
      return kept.join(' ')
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`
    }
  }
  let checked = 0
  let dropped = 0
  let failed = 0
  for (let round = 0; round < 400; round++) {
    // Events in answer order with ties and repeats, unknown entities and space events; in one
    // answer of ten, two events swapped out of order.
    const events: StoredEvent[] = []
    for (let k = random(60); k > 0; k--) {
      const ms = random(90) - 5
      const device = random(4) === 0 ? undefined : pick(['d0', 'd1', 'd2', 'd3', 'd4', 'd5'])
      const message: Message = { message_id: pick(['a', 'b', 'c', 'e1', 'e2', 'x', 'y']), message_code: pick(['C1', 'C2']), message_category: pick(['alert', 'notification'] as const), date_time: at(ms) }
      if (device !== undefined) message.device_id = device
      if (device !== undefined || random(5) !== 0) message.space_id = pick(['s0', 's1', 's2'])
      events.push({ message, epochMs: T0 + ms })
      if (random(8) === 0) events.push({ message: { ...message }, epochMs: T0 + ms })
    }
    events.sort((a, b) => a.epochMs - b.epochMs || compareMessageIds(a.message.message_id, b.message.message_id))
    if (round % 10 === 9 && events.length > 2) {
      const i = random(events.length - 1)
      ;[events[i], events[i + 1]] = [events[i + 1]!, events[i]!]
    }
    const messages = events.map((event) => event.message)
    const { bytes, offsets } = encodeMessageList(messages)
    const facts = {
      epochMs: Float64Array.from(events, (event) => event.epochMs),
      deviceNumbers: Int32Array.from(messages, (m) => m.device_id === undefined ? -1 : entityNumber(m.device_id)),
      spaceNumbers: Int32Array.from(messages, (m) => m.space_id === undefined ? -1 : entityNumber(m.space_id))
    }
    // The same events cut into batches at random places, once without facts and once with.
    const cuts: Array<[number, number]> = []
    for (let from = 0; from < events.length;) {
      const to = Math.min(events.length, from + 1 + random(20))
      cuts.push([from, to])
      from = to
    }
    const positionsOf = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
    const byText = cuts.map(([from, to]) => ({ messages: messages.slice(from, to), encoded: { bytes, offsets, positions: positionsOf(from, to) } }))
    const byNumber = cuts.map(([from, to]) => ({ messages: messages.slice(from, to), encoded: { bytes, offsets, positions: positionsOf(from, to), facts } }))
    // Now and then one batch without its facts among batches with them: the order carries over.
    const mixed = byNumber.map((batch, i) => i % 2 === 1 ? byText[i]! : batch)
    const query: EventQuery = { startMs: T0 + random(4), endMs: T0 + 10 + random(80), entities: selection(), scope: random(2) === 0 ? undefined : selection() }
    if (random(4) === 0) query.category = pick(['alert', 'notification'] as const)
    if (random(5) === 0) query.messageCodes = new Set(['C2'])
    const wanted = await outcome(byText, query)
    t.equal(await outcome(byNumber, query), wanted, `round ${round}: by number`)
    t.equal(await outcome(mixed, query), wanted, `round ${round}: by number and by text in turns`)
    checked += events.length
    if (wanted.startsWith('StoreContractError')) failed++
    else if (wanted.split(' ').length < events.length) dropped++
  }
  t.ok(checked > 5000 && dropped > 200 && failed > 10, `${checked} events in 400 answers: ${dropped} with events dropped, ${failed} failed for their order`)
})
