import type { EventBatch, EventQuery, EventStore, StoreHealth } from '../event-store.js'
import type { InfluxBackend } from './influx-backend.js'
import { idHashesOf } from './message-id-index.js'
import { orderWithinMilliseconds } from './order-within-milliseconds.js'
import { isScan, ScanGate } from './scan-gate.js'

/** InfluxDB behind the store interface, in either dialect. */
export class InfluxEventStore implements EventStore {
  readonly kind: string
  readonly #backend: InfluxBackend
  readonly #scans: ScanGate

  constructor (backend: InfluxBackend, maxScans: number) {
    this.#backend = backend
    this.#scans = new ScanGate(maxScans)
    this.kind = `influxdb (${backend.dialect})`
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
