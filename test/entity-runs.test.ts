import t from 'tap'
import { Readable } from 'node:stream'
import type { Message } from '../schemas/message.js'
import type { StoredEvent } from '../src/data/event-lines.js'
import type { EventBatch, EventQuery } from '../src/store/event-store.js'
import { MemorySegment } from '../src/store/memory/memory-segment.js'
import { MemoryEventStore } from '../src/store/memory/memory-event-store.js'
import { keepStoreContract, type KnownEntities } from '../src/store/store-contract.js'
import { renderEventsBody } from '../src/events/render-events-body.js'
import { encodeMessage } from '../src/store/message-json.js'

/**
 * The memory store's entity runs (memory-segment.ts, EntityRuns): an answer of one entity's events
 * copied in one piece from a run of their JSON must be byte for byte the answer written event by
 * event, whole or streamed, and an answer the contract thins out must not use the run.
 */
const T0 = Date.UTC(2025, 0, 1)
const events: StoredEvent[] = []
for (let i = 0; i < 3000; i++) {
  // The busy space s1 (devices d1, d2 and its own events), and a quiet one with a few.
  const space = i % 100 === 99 ? 's2' : 's1'
  const device = i % 3 === 0 ? undefined : i % 3 === 1 ? 'd1' : (i % 7 === 0 ? 'gone' : 'd2')
  const message: Message = { message_id: `m${String(i).padStart(5, '0')}`, message_code: 'C', message_category: 'alert', date_time: new Date(T0 + i * 1000).toISOString(), space_id: space }
  if (device !== undefined) message.device_id = device
  events.push({ epochMs: T0 + i * 1000, message })
}
const everyone: KnownEntities = { knowsEntityOf: () => true }
const notGone: KnownEntities = { knowsEntityOf: (event) => event.device_id !== 'gone' }

async function bodyOf (store: MemoryEventStore, query: EventQuery, known: KnownEntities): Promise<{ text: string, streamed: boolean, runs: number }> {
  let runs = 0
  const counted = keepStoreContract({ kind: 'memory', queryEvents: (asked: EventQuery) => store.queryEvents(asked), health: async () => ({ ready: true }), writeEvents: async () => { throw new Error('no writes') }, close: async () => {} }, query, known)
  const batches = [...(counted as Iterable<EventBatch>)]
  for (const batch of batches) if (batch.encoded?.run !== undefined) runs++
  const body = renderEventsBody(batches, [])
  const bytes = Buffer.isBuffer(body) ? body : Buffer.concat(await (body as Readable).toArray())
  return { text: bytes.toString(), streamed: !Buffer.isBuffer(body), runs }
}

function expected (query: EventQuery, known: KnownEntities): string {
  const { deviceIds, spaceIds } = query.entities!
  const kept = events.filter(({ epochMs, message }) => epochMs >= query.startMs && epochMs < query.endMs && known.knowsEntityOf(message) &&
    ((message.device_id !== undefined && deviceIds.has(message.device_id)) || spaceIds.has(message.space_id!)))
  return `{"data":[${kept.map(({ message }) => encodeMessage(message)).join(',')}],"errors":[]}`
}

const store = new MemoryEventStore(new MemorySegment(events))
const entities = (devices: string[], spaces: string[]) => ({ deviceIds: new Set(devices), spaceIds: new Set(spaces) })

t.test('an entity\'s answer from its run is byte for byte the answer event by event, for any window', async (t) => {
  const cases: Array<[string, EventQuery]> = [
    ['a busy space, all of it (streamed)', { startMs: T0, endMs: T0 + 3_000_000, entities: entities([], ['s1']) }],
    ['a busy space, a window inside', { startMs: T0 + 123_456, endMs: T0 + 987_654, entities: entities([], ['s1']) }],
    ['a busy space, its first event only', { startMs: T0, endMs: T0 + 1, entities: entities([], ['s1']) }],
    ['a busy space, its last event only', { startMs: T0 + 2_998_000, endMs: T0 + 2_998_001, entities: entities([], ['s1']) }],
    ['a busy device', { startMs: T0 + 5000, endMs: T0 + 2_000_000, entities: entities(['d1'], []) }],
    ['a quiet space (no run)', { startMs: T0, endMs: T0 + 3_000_000, entities: entities([], ['s2']) }]
  ]
  for (const [name, query] of cases) {
    const { text, runs } = await bodyOf(store, query, everyone)
    t.equal(text, expected(query, everyone), name)
    if (name.includes('no run')) t.equal(runs, 0, `${name}: written event by event`)
    else t.ok(runs > 0, `${name}: written from the run`)
  }
  const whole = await bodyOf(store, cases[0]![1], everyone)
  t.ok(whole.streamed, 'the whole space streams, from its run too')
})

t.test('an answer the contract thins out is written event by event, without the run', async (t) => {
  const query: EventQuery = { startMs: T0, endMs: T0 + 3_000_000, entities: entities([], ['s1']) }
  const { text, runs } = await bodyOf(store, query, notGone)
  t.equal(text, expected(query, notGone))
  t.ok(text.length < expected(query, everyone).length, 'events were dropped')
  t.ok(runs < 3, 'batches with a dropped event lose the run')
})

t.test('a run is made only by an answer of a good share of the entity\'s events, then serves any window of it', async (t) => {
  const fresh = new MemoryEventStore(new MemorySegment(events))
  const day: EventQuery = { startMs: T0, endMs: T0 + 10_000, entities: entities([], ['s1']) }
  const all: EventQuery = { startMs: T0, endMs: T0 + 3_000_000, entities: entities([], ['s1']) }
  t.equal((await bodyOf(fresh, day, everyone)).runs, 0, 'a few of its events: written event by event, no run made')
  t.equal((await bodyOf(fresh, day, everyone)).runs, 0, 'still none')
  t.ok((await bodyOf(fresh, all, everyone)).runs > 0, 'all of them: the run is made')
  const again = await bodyOf(fresh, day, everyone)
  t.equal(again.runs, 1, 'a few of them once the run is there: from the run')
  t.equal(again.text, expected(day, everyone))
})
