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
  #prepared: Promise<void> | undefined
  /** Writes one at a time (the slots of one millisecond are chosen from what is stored). */
  #writing: Promise<unknown> = Promise.resolve()
  /** The message_ids of the ingests not finished yet, with how many of them hold each. */
  readonly #pending = new Map<string, number>()

  constructor (backend: InfluxBackend, maxScans: number, measurement: string) {
    this.#backend = backend
    this.#scans = new ScanGate(maxScans)
    this.kind = `influxdb (${backend.dialect})`
    this.#writer = new InfluxEventWriter(backend, measurement)
  }

  /**
   * As `npm run ingest` writes (InfluxEventWriter); resolves once InfluxDB acknowledged every
   * point. Writes go one at a time, but a batch's index lookup (half of an ingest's time) runs
   * while the batches before it are written, unless one of its IDs is in one of them: then it is
   * looked up after they are stored, so it sees them.
   */
  writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    const ids = events.map(({ event }) => event.message.message_id)
    const overlaps = ids.some((id) => this.#pending.has(id))
    for (const id of ids) this.#pending.set(id, (this.#pending.get(id) ?? 0) + 1)
    const prepared = this.#prepare()
    const early = overlaps ? undefined : prepared.then(() => this.#writer.lookUp(ids))
    early?.catch(() => {})
    const written = this.#writing.then(async () => {
      await prepared
      return await this.#writer.writeLookedUp(events, await (early ?? this.#writer.lookUp(ids)))
    })
    this.#writing = written.catch(() => {})
    return written.finally(() => {
      for (const id of ids) {
        const holders = this.#pending.get(id)! - 1
        if (holders === 0) this.#pending.delete(id)
        else this.#pending.set(id, holders)
      }
    })
  }

  /** CREATE DATABASE once (retried on the next write when it failed). */
  #prepare (): Promise<void> {
    this.#prepared ??= this.#writer.prepareForWrites().catch((error: unknown) => {
      this.#prepared = undefined
      throw error
    })
    return this.#prepared
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
