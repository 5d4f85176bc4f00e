import t from 'tap'
import fc from 'fast-check'
import type { Message } from '../schemas/message.js'
import type { StoredEvent } from '../src/data/event-lines.js'
import { EntityRegistry } from '../src/registry/entity-registry.js'
import { compareMessageIds } from '../src/store/event-order.js'
import type { EventQuery } from '../src/store/event-store.js'
import { MemoryEventStore } from '../src/store/memory/memory-event-store.js'
import { keepStoreContract } from '../src/store/store-contract.js'

const DAY = 86_400_000
const T0 = Date.UTC(2025, 0, 1)
const spaces = ['s0', 's1', 's2', 's3']
const devices = Array.from({ length: 12 }, (_, i) => `d${i}`)
const registry = new EntityRegistry({
  spaces: spaces.map((id) => ({ id })),
  devices: devices.map((id, i) => ({ id, space_id: spaces[i % spaces.length]! })),
  tags: []
})

const event = fc.record({
  id: fc.integer({ min: 0, max: 10_000 }),
  // Few distinct times, so that many events share a millisecond.
  at: fc.integer({ min: 0, max: 40 }).map((n) => T0 + n * (DAY / 4)),
  device: fc.option(fc.constantFrom(...devices, 'ghost'), { nil: undefined }),
  space: fc.constantFrom(...spaces, 'void'),
  code: fc.constantFrom('A', 'B', 'C'),
  category: fc.constantFrom('alert' as const, 'notification' as const)
})

const events = fc.uniqueArray(event, { selector: (e) => e.id, maxLength: 300 }).map((list) => list.map((e): StoredEvent => {
  const message: Message = { message_id: `m${e.id}`, message_code: e.code, message_category: e.category, date_time: new Date(e.at).toISOString() }
  if (e.device !== undefined) message.device_id = e.device
  message.space_id = e.space
  return { message, epochMs: e.at }
}))

const query = fc.record({
  start: fc.integer({ min: -1, max: 41 }).map((n) => T0 + n * (DAY / 4)),
  length: fc.integer({ min: 1, max: 42 }).map((n) => n * (DAY / 4)),
  entities: fc.option(fc.record({
    deviceIds: fc.uniqueArray(fc.constantFrom(...devices), { maxLength: 12 }),
    spaceIds: fc.uniqueArray(fc.constantFrom(...spaces), { maxLength: 4 })
  }), { nil: undefined }),
  filter: fc.oneof(
    fc.constant({}),
    fc.record({ messageIds: fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }).map((n) => `m${n}`), { maxLength: 20 }) }),
    fc.record({ category: fc.constantFrom('alert' as const, 'notification' as const) }),
    fc.record({ messageCodes: fc.uniqueArray(fc.constantFrom('A', 'B', 'C', 'Z'), { minLength: 1 }) })
  )
}).map(({ start, length, entities, filter }): EventQuery => ({
  startMs: start,
  endMs: start + length,
  entities: entities && { deviceIds: new Set(entities.deviceIds), spaceIds: new Set(entities.spaceIds) },
  messageIds: 'messageIds' in filter ? new Set(filter.messageIds) : undefined,
  category: 'category' in filter ? filter.category : undefined,
  messageCodes: 'messageCodes' in filter ? new Set(filter.messageCodes) : undefined
}))

/** The definition, applied to every event with no index. */
function reference (all: StoredEvent[], q: EventQuery): string[] {
  return all
    .filter(({ message: m, epochMs }) =>
      registry.knowsEntityOf(m) &&
      epochMs >= q.startMs && epochMs < q.endMs &&
      (q.entities === undefined || (m.device_id !== undefined && q.entities.deviceIds.has(m.device_id)) || q.entities.spaceIds.has(m.space_id!)) &&
      (q.messageIds === undefined || q.messageIds.has(m.message_id)) &&
      (q.category === undefined || q.category === m.message_category) &&
      (q.messageCodes === undefined || q.messageCodes.has(m.message_code)))
    .sort((a, b) => a.epochMs - b.epochMs || compareMessageIds(a.message.message_id, b.message.message_id))
    .map(({ message }) => message.message_id)
}

/** What the provider serves: the store's answer held to the shared contract. */
async function collect (store: MemoryEventStore, q: EventQuery): Promise<string[]> {
  const ids: string[] = []
  for await (const batch of keepStoreContract(store, q, registry)) {
    batch.messages.forEach((message, i) => {
      // The bytes handed over are the message's wire JSON.
      const { bytes, offsets, positions } = batch.encoded!
      const json = bytes.subarray(offsets[positions[i]!], offsets[positions[i]! + 1]).toString()
      if (json !== JSON.stringify(message)) throw new Error(`encoded ${json} for ${JSON.stringify(message)}`)
      ids.push(message.message_id)
    })
  }
  return ids
}

t.test('the indexes answer exactly what a scan of every event answers', async (t) => {
  await fc.assert(fc.asyncProperty(events, fc.array(query, { minLength: 1, maxLength: 10 }), async (all, queries) => {
    const store = new MemoryEventStore(all)
    for (const q of queries) {
      const found = await collect(store, q)
      const wanted = reference(all, q)
      if (JSON.stringify(found) !== JSON.stringify(wanted)) throw new Error(`found ${found.join()} wanted ${wanted.join()}`)
    }
  }), { numRuns: 300 })
  t.pass('300 random stores and queries agree with the reference')
})

t.test('large answers come in batches', async (t) => {
  const all: StoredEvent[] = Array.from({ length: 2500 }, (_, i) => ({
    message: { message_id: `m${i}`, message_code: 'A', message_category: 'alert', date_time: new Date(T0 + i).toISOString(), device_id: 'd0', space_id: 's0' },
    epochMs: T0 + i
  }))
  const store = new MemoryEventStore(all)
  const sizes: number[] = []
  for await (const batch of store.queryEvents({ startMs: T0, endMs: T0 + DAY, entities: undefined })) sizes.push(batch.messages.length)
  t.same(sizes, [1000, 1000, 500])
})
