import type { Message } from '../../../schemas/message.js'
import type { EntityRegistry } from '../../registry/entity-registry.js'
import type { EventQuery, EventStore, StoreHealth } from '../event-store.js'
import type { InfluxBackend } from './influx-backend.js'
import { orderedBatches } from './ordered-batches.js'
import { isScan, ScanGate } from './scan-gate.js'

/** InfluxDB behind the store interface, in either dialect. */
export class InfluxEventStore implements EventStore {
  readonly kind: string
  readonly #backend: InfluxBackend
  readonly #registry: EntityRegistry
  readonly #scans: ScanGate

  constructor (backend: InfluxBackend, registry: EntityRegistry, maxScans: number) {
    this.#backend = backend
    this.#registry = registry
    this.#scans = new ScanGate(maxScans)
    this.kind = `influxdb (${backend.dialect})`
  }

  queryEvents (query: EventQuery): AsyncIterable<Message[]> {
    if (matchesNothing(query)) return noMessages()
    const rows = isScan(query)
      ? this.#scans.pass(() => this.#backend.queryEvents(query))
      : this.#backend.queryEvents(query)
    return orderedBatches(rows, query, this.#registry)
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

/** An empty list filter cannot match; the dialects have no way to say so in a query. */
function matchesNothing (query: EventQuery): boolean {
  return query.startMs >= query.endMs ||
    (query.entities !== undefined && query.entities.deviceIds.size === 0 && query.entities.spaceIds.size === 0) ||
    query.messageIds?.size === 0 || query.messageCodes?.size === 0
}

async function * noMessages (): AsyncGenerator<Message[]> {}
