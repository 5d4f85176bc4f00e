import type { Message } from '../../../schemas/message.js'
import { sameEvent } from '../../data/event-lines.js'
import { DAY_MS, EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../../time/rfc3339.js'
import type { EventWriter, IngestEvent, WriteOutcome } from '../event-writer.js'
import { SLOTS_PER_MS, messageOf, seriesKeyOf, slotOf, toLineProtocol } from './event-point.js'
import type { InfluxBackend } from './influx-backend.js'
import { idHashesOf, toIndexLine } from './message-id-index.js'

const WRITE_BATCH = 5000

/**
 * At most this many bytes of line protocol per write: influxd refuses a body over its
 * `max-body-size` (25 MB by default) with 413, and long identifiers make 5,000 lines pass that
 * (each escaped again inside its index point's JSON).
 */
const WRITE_MAX_BYTES = 8 * 1024 * 1024

/** The lines in runs of at most WRITE_BATCH lines and WRITE_MAX_BYTES bytes, as [from, to) pairs. */
export function writeRuns (lines: readonly string[]): Array<[number, number]> {
  const runs: Array<[number, number]> = []
  let from = 0
  let bytes = 0
  for (let i = 0; i < lines.length; i++) {
    const size = Buffer.byteLength(lines[i]!) + 1
    if (i > from && (i - from === WRITE_BATCH || bytes + size > WRITE_MAX_BYTES)) {
      runs.push([from, i])
      from = i
      bytes = 0
    }
    bytes += size
  }
  if (from < lines.length) runs.push([from, lines.length])
  return runs
}

/**
 * ID hashes per index lookup: one InfluxQL or Flux condition each. InfluxDB 1.6's time for a
 * query grows faster than its OR conditions do: 1,000 took 258 ms, 100 took 6.7 ms; a batch of
 * 1,000 new events went from about 250 to 70 ms with lookups of 50.
 */
const HASHES_PER_LOOKUP = 50

/** Index lookups of one batch that run at once (no gain with InfluxDB on the same 2 cores; some beside it). */
const LOOKUPS_AT_ONCE = 2

/** The ingest's way into InfluxDB, in either dialect. */
export class InfluxEventWriter implements EventWriter {
  readonly #backend: InfluxBackend
  readonly #measurement: string

  constructor (backend: InfluxBackend, measurement: string) {
    this.#backend = backend
    this.#measurement = measurement
  }

  async close (): Promise<void> {
    await this.#backend.close()
  }

  async prepareForWrites (): Promise<void> {
    await this.#backend.prepareForWrites()
  }

  /**
   * Writes events so that none overwrites another and no message_id names two events:
   *
   * 1. Every ID of the batch is looked up in the message_id index across all time: one stored as
   *    this very event is unchanged; one stored as another event (other fields, or another time,
   *    even a millisecond apart) is refused.
   * 2. For each day the others touch, the points already stored are read: an event already there
   *    without its index point (a write cut between the two, or made before the index existed)
   *    gets it now and counts as written, since no answer said it was stored; any other
   *    takes its message_id's slot, or the next free one when another ID holds it.
   *
   * Event points are written before their index points: a write cut in between leaves events the
   * next run finds in step 2 and indexes, never an index point without its event.
   */
  async writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    return await this.writeLookedUp(events, await this.lookUp(events.map(({ event }) => event.message.message_id)))
  }

  /** Step 1 alone: what the index holds for these IDs (a caller may look up while another batch is written). */
  async lookUp (messageIds: readonly string[]): Promise<Map<string, Message>> {
    return await this.#indexed(messageIds)
  }

  /** Steps 1 (with the index's answer for every ID of the batch) and 2. */
  async writeLookedUp (events: readonly IngestEvent[], lookedUp: ReadonlyMap<string, Message>): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { written: 0, unchanged: 0, refused: [], stored: [] }
    const indexed = new Map(lookedUp)
    const fresh: IngestEvent[] = []
    for (const ingest of events) {
      const { message } = ingest.event
      const known = indexed.get(message.message_id)
      if (known === undefined) {
        fresh.push(ingest)
        // A later line of this batch with the same ID is judged against this one.
        indexed.set(message.message_id, message)
      } else if (sameEvent(known, message)) {
        outcome.unchanged++
      } else {
        outcome.refused.push({ line: ingest.line, reason: `message_id ${JSON.stringify(message.message_id)} is already stored for a different event` })
      }
    }
    const sorted = fresh.sort((a, b) => a.event.epochMs - b.event.epochMs)
    let from = 0
    while (from < sorted.length) {
      const windowStart = sorted[from]!.event.epochMs
      let to = from
      while (to < sorted.length && sorted[to]!.event.epochMs < windowStart + DAY_MS) to++
      await this.#writeWindow(sorted.slice(from, to), outcome)
      from = to
    }
    return outcome
  }

  /** What the index holds for these IDs, across all time. */
  async #indexed (messageIds: readonly string[]): Promise<Map<string, Message>> {
    const wanted = new Set(messageIds)
    const found = new Map<string, Message>()
    const hashes = idHashesOf(wanted)
    const lookups: string[][] = []
    for (let i = 0; i < hashes.length; i += HASHES_PER_LOOKUP) lookups.push(hashes.slice(i, i + HASHES_PER_LOOKUP))
    const lookUp = async () => {
      for (let next = lookups.pop(); next !== undefined; next = lookups.pop()) {
        for await (const rows of this.#backend.indexedEvents(next, EVENT_TIME_MIN_MS, EVENT_TIME_MAX_MS)) {
          for (const { message } of rows) {
            if (wanted.has(message.message_id)) found.set(message.message_id, message)
          }
        }
      }
    }
    await Promise.all(Array.from({ length: LOOKUPS_AT_ONCE }, lookUp))
    return found
  }

  async #writeWindow (events: readonly IngestEvent[], outcome: WriteOutcome): Promise<void> {
    const startMs = events[0]!.event.epochMs
    const endMs = events[events.length - 1]!.event.epochMs + 1
    /** series@ms -> slot -> message_id */
    const occupied = new Map<string, Map<number, string>>()
    /** message_id -> where it is stored: series@ms and slot */
    const stored = new Map<string, { key: string, slot: number }>()
    for await (const points of this.#backend.pointsBetween(startMs, endMs)) {
      for (const point of points) {
        const message = messageOf(point.values, point.epochMs)
        const key = seriesKeyOf(message) + '@' + point.epochMs
        let slots = occupied.get(key)
        if (slots === undefined) occupied.set(key, slots = new Map())
        slots.set(point.slot, message.message_id)
        stored.set(message.message_id, { key, slot: point.slot })
      }
    }
    const eventLines: string[] = []
    const indexLines: string[] = []
    const written: IngestEvent[] = []
    const repaired: IngestEvent[] = []
    for (const ingest of events) {
      const { event, line } = ingest
      const { message, epochMs } = event
      const key = seriesKeyOf(message) + '@' + epochMs
      const storedAt = stored.get(message.message_id)
      if (storedAt?.key === key) {
        // Its point is stored but not its index point: a write cut between the two (its client
        // was answered 503) or one made before the index existed. Indexed now, and written (and
        // pushed) as far as any answer has said: none said it was stored.
        indexLines.push(toIndexLine(this.#measurement, message, epochMs, storedAt.slot))
        repaired.push(ingest)
        continue
      }
      if (storedAt !== undefined) {
        outcome.refused.push({ line, reason: `message_id ${JSON.stringify(message.message_id)} is already stored for a different event` })
        continue
      }
      let slots = occupied.get(key)
      if (slots === undefined) occupied.set(key, slots = new Map())
      let slot = slotOf(message.message_id)
      while (slots.has(slot)) slot = (slot + 1) % SLOTS_PER_MS
      slots.set(slot, message.message_id)
      stored.set(message.message_id, { key, slot })
      written.push(ingest)
      eventLines.push(toLineProtocol(this.#measurement, message, epochMs, slot))
      indexLines.push(toIndexLine(this.#measurement, message, epochMs, slot))
    }
    for (const [from, to] of writeRuns(eventLines)) {
      await this.#backend.write(eventLines.slice(from, to))
      outcome.written += to - from
      for (const ingest of written.slice(from, to)) outcome.stored.push(ingest)
    }
    for (const [from, to] of writeRuns(indexLines)) await this.#backend.write(indexLines.slice(from, to))
    outcome.written += repaired.length
    for (const ingest of repaired) outcome.stored.push(ingest)
  }
}
