import type { Message } from '../../../schemas/message.js'
import type { EntityRegistry } from '../../registry/entity-registry.js'
import type { EventQuery, EventStore, StoreHealth } from '../event-store.js'
import type { InfluxBackend } from './influx-backend.js'
import { orderedBatches } from './ordered-batches.js'

/** InfluxDB behind the store interface, in either dialect. */
export class InfluxEventStore implements EventStore {
  readonly kind: string
  readonly #backend: InfluxBackend
  readonly #registry: EntityRegistry

  constructor (backend: InfluxBackend, registry: EntityRegistry) {
    this.#backend = backend
    this.#registry = registry
    this.kind = `influxdb (${backend.dialect})`
  }

  queryEvents (query: EventQuery): AsyncIterable<Message[]> {
    return orderedBatches(this.#backend.queryEvents(query), query, this.#registry)
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
