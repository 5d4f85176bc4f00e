import t from 'tap'
import type { Message } from '../schemas/message.js'
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
