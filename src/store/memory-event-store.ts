import type { Message } from '../../schemas/message.js'
import type { StoredEvent } from '../data/event-lines.js'
import { keepJsonBytes } from '../events/message-json.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import { compareEvents, matchesFilters, type EventQuery, type EventStore, type StoreHealth } from './event-store.js'

/** Events of one entity (or of all), sorted, with their times in a flat array for binary search. */
class TimeIndex {
  readonly events: StoredEvent[]
  readonly times: Float64Array

  constructor (events: StoredEvent[]) {
    this.events = events
    this.times = Float64Array.from(events, (event) => event.epochMs)
  }

  /** The first position whose time is >= ms. */
  lowerBound (ms: number): number {
    let low = 0
    let high = this.times.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.times[middle]! < ms) low = middle + 1
      else high = middle
    }
    return low
  }
}

const BATCH_SIZE = 1000
const EMPTY = new TimeIndex([])

function byTimeThenId (a: StoredEvent, b: StoredEvent): number {
  return compareEvents(a.epochMs, a.message.message_id, b.epochMs, b.message.message_id)
}

/**
 * The embedded store: every event in memory, indexed by time overall, per device and per space
 * (a device's events are also indexed under the space they happened in), and by message_id.
 */
export class MemoryEventStore implements EventStore {
  readonly kind = 'memory'
  readonly #all: TimeIndex
  readonly #byDevice = new Map<string, TimeIndex>()
  readonly #bySpace = new Map<string, TimeIndex>()
  readonly #byMessageId = new Map<string, StoredEvent>()

  /** Events of entities the registry does not know are left out here, so they are never served. */
  constructor (events: Iterable<StoredEvent>, registry: EntityRegistry) {
    const known: StoredEvent[] = []
    // Millions of events name a few thousand entities and codes: one string each, not one per event.
    const strings = new Map<string, string>()
    const intern = (value: string) => {
      const kept = strings.get(value)
      if (kept !== undefined) return kept
      strings.set(value, value)
      return value
    }
    for (const event of events) {
      if (!registry.knowsEntityOf(event.message)) continue
      const message = event.message
      message.message_code = intern(message.message_code)
      if (message.device_id !== undefined) message.device_id = intern(message.device_id)
      if (message.space_id !== undefined) message.space_id = intern(message.space_id)
      known.push(event)
    }
    known.sort(byTimeThenId)
    keepJsonBytes(known.map((event) => event.message))
    const byDevice = new Map<string, StoredEvent[]>()
    const bySpace = new Map<string, StoredEvent[]>()
    const append = (map: Map<string, StoredEvent[]>, key: string, event: StoredEvent) => {
      const list = map.get(key)
      if (list === undefined) map.set(key, [event])
      else list.push(event)
    }
    for (const event of known) {
      const { device_id: deviceId, space_id: spaceId, message_id: messageId } = event.message
      if (deviceId !== undefined) append(byDevice, deviceId, event)
      if (spaceId !== undefined) append(bySpace, spaceId, event)
      this.#byMessageId.set(messageId, event)
    }
    this.#all = new TimeIndex(known)
    for (const [id, list] of byDevice) this.#byDevice.set(id, new TimeIndex(list))
    for (const [id, list] of bySpace) this.#bySpace.set(id, new TimeIndex(list))
  }

  get size (): number {
    return this.#all.events.length
  }

  async * queryEvents (query: EventQuery): AsyncGenerator<Message[]> {
    let batch: Message[] = []
    for (const event of this.#candidates(query)) {
      if (!matchesFilters(query, event.message)) continue
      batch.push(event.message)
      if (batch.length === BATCH_SIZE) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }

  async health (): Promise<StoreHealth> {
    return { ready: true }
  }

  async close (): Promise<void> {}

  /** Events in the window, in order, that may match: the cheapest of the ID, entity and time indexes. */
  * #candidates (query: EventQuery): Generator<StoredEvent> {
    const { startMs, endMs, entities, messageIds } = query
    if (messageIds !== undefined) {
      const found: StoredEvent[] = []
      for (const id of messageIds) {
        const event = this.#byMessageId.get(id)
        if (event !== undefined && event.epochMs >= startMs && event.epochMs < endMs) found.push(event)
      }
      yield * found.sort(byTimeThenId)
      return
    }
    if (entities === undefined) {
      yield * this.#window(this.#all, startMs, endMs)
      return
    }
    const indexes = [
      ...[...entities.deviceIds].map((id) => this.#byDevice.get(id) ?? EMPTY),
      ...[...entities.spaceIds].map((id) => this.#bySpace.get(id) ?? EMPTY)
    ].filter((index) => index.events.length > 0)
    if (indexes.length === 0) return
    if (indexes.length === 1) {
      yield * this.#window(indexes[0]!, startMs, endMs)
      return
    }
    const windows = indexes.map((index) => ({ index, from: index.lowerBound(startMs), to: index.lowerBound(endMs) }))
    const selected = windows.reduce((sum, { from, to }) => sum + to - from, 0)
    const overall = this.#all.lowerBound(endMs) - this.#all.lowerBound(startMs)
    // Sorting the entities' windows costs n log n; walking the whole window with a set lookup costs
    // its length. Take whichever reads less.
    if (selected * Math.log2(selected + 1) >= overall) {
      yield * this.#window(this.#all, startMs, endMs)
      return
    }
    const merged: StoredEvent[] = []
    for (const { index, from, to } of windows) {
      for (let i = from; i < to; i++) merged.push(index.events[i]!)
    }
    merged.sort(byTimeThenId)
    // A device's event is in its device's window and in its space's: keep one.
    let previous: StoredEvent | undefined
    for (const event of merged) {
      if (event !== previous) yield event
      previous = event
    }
  }

  * #window (index: TimeIndex, startMs: number, endMs: number): Generator<StoredEvent> {
    const to = index.lowerBound(endMs)
    for (let i = index.lowerBound(startMs); i < to; i++) yield index.events[i]!
  }
}
