import { DAY_MS } from '../../time/rfc3339.js'
import type { EventWriter, IngestEvent, WriteOutcome } from '../event-writer.js'
import { SLOTS_PER_MS, messageOf, seriesKeyOf, slotOf, toLineProtocol } from './event-point.js'
import type { InfluxBackend } from './influx-backend.js'

const WRITE_BATCH = 5000

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
   * Writes events so that none overwrites another: for each day the batch touches, the points
   * already stored are read; an event whose message_id is already stored at the same series and
   * millisecond is unchanged; one whose message_id is stored as another event is refused; any
   * other takes its message_id's slot, or the next free one when another ID holds it.
   */
  async writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { written: 0, unchanged: 0, refused: [] }
    const sorted = [...events].sort((a, b) => a.event.epochMs - b.event.epochMs)
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

  async #writeWindow (events: readonly IngestEvent[], outcome: WriteOutcome): Promise<void> {
    const startMs = events[0]!.event.epochMs
    const endMs = events[events.length - 1]!.event.epochMs + 1
    /** series@ms -> slot -> message_id */
    const occupied = new Map<string, Map<number, string>>()
    /** message_id -> series@ms where it is stored */
    const stored = new Map<string, string>()
    for await (const points of this.#backend.pointsBetween(startMs, endMs)) {
      for (const point of points) {
        const message = messageOf(point.values, point.epochMs)
        const key = seriesKeyOf(message) + '@' + point.epochMs
        let slots = occupied.get(key)
        if (slots === undefined) occupied.set(key, slots = new Map())
        slots.set(point.slot, message.message_id)
        stored.set(message.message_id, key)
      }
    }
    const lines: string[] = []
    for (const { event, line } of events) {
      const { message, epochMs } = event
      const key = seriesKeyOf(message) + '@' + epochMs
      const storedAt = stored.get(message.message_id)
      if (storedAt === key) {
        outcome.unchanged++
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
      stored.set(message.message_id, key)
      lines.push(toLineProtocol(this.#measurement, message, epochMs, slot))
    }
    for (let i = 0; i < lines.length; i += WRITE_BATCH) {
      const chunk = lines.slice(i, i + WRITE_BATCH)
      await this.#backend.write(chunk)
      outcome.written += chunk.length
    }
  }
}
