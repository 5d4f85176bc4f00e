import type { EventBatch, EventQuery, EventStore, StoreHealth } from '../event-store.js'
import type { IngestEvent, WriteOutcome } from '../event-writer.js'
import type { InfluxBackend } from './influx-backend.js'
import { InfluxEventWriter } from './influx-event-writer.js'
import { idHashesOf } from './message-id-index.js'
import { orderWithinMilliseconds } from './order-within-milliseconds.js'
import { isScan, ScanGate } from './scan-gate.js'

/** InfluxDB behind the store interface, in either dialect. */
export class InfluxEventStore implements EventStore {
  readonly kind: string
  readonly #backend: InfluxBackend
  readonly #scans: ScanGate
  readonly #writer: InfluxEventWriter
  #prepared = false
  /** Writes one at a time: the index lookup and the write are one step (two batches with one new message_id). */
  #writing: Promise<unknown> = Promise.resolve()

  constructor (backend: InfluxBackend, maxScans: number, measurement: string) {
    this.#backend = backend
    this.#scans = new ScanGate(maxScans)
    this.kind = `influxdb (${backend.dialect})`
    this.#writer = new InfluxEventWriter(backend, measurement)
  }

  /** As `npm run ingest` writes (InfluxEventWriter); resolves once InfluxDB acknowledged every point. */
  writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    const written = this.#writing.then(async () => {
      if (!this.#prepared) {
        await this.#writer.prepareForWrites()
        this.#prepared = true
      }
      return await this.#writer.writeEvents(events)
    })
    this.#writing = written.catch(() => {})
    return written
  }

  queryEvents (query: EventQuery): AsyncIterable<EventBatch> {
    // message_ids: the index's few series of those IDs' hashes, not every point of the window.
    if (query.messageIds !== undefined) return orderWithinMilliseconds(this.#backend.indexedEvents(idHashesOf(query.messageIds), query.startMs, query.endMs))
    const rows = isScan(query)
      ? this.#scans.pass(() => this.#backend.queryEvents(query))
      : this.#backend.queryEvents(query)
    return orderWithinMilliseconds(rows)
  }

  async health (): Promise<StoreHealth> {
    try {
      await this.#backend.ping()
      return { ready: true }
    } catch (error) {
      return { ready: false, reason: (error as Error).message }
    }
  }

  async close (): Promise<void> {
    await this.#backend.close()
  }
}
