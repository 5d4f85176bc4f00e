import fp from 'fastify-plugin'
import type { EventBatch, EventQuery, StoreHealth } from '../src/store/event-store.js'
import type { ConfiguredStore } from '../src/store/store-descriptor.js'
import { keepStoreContract } from '../src/store/store-contract.js'

/** The events the provider serves: the configured store's answers, held to the contract every store keeps. */
export interface ServedEvents {
  /** What kind of store answers (for the readiness probe). */
  readonly kind: string
  /** The events of a query, in batches, through keepStoreContract (src/store/store-contract.ts). */
  query (query: EventQuery): AsyncIterable<EventBatch>
  health (): Promise<StoreHealth>
}

declare module 'fastify' {
  interface FastifyInstance {
    events: ServedEvents
  }
}

export interface EventStoreOptions {
  store: ConfiguredStore
}

/** Opens the store STORE chose; the routes see only ServedEvents, never the store itself. */
export default fp<EventStoreOptions>(async function eventStore (fastify, options) {
  const store = await options.store.open({ log: fastify.log })
  fastify.addHook('onClose', async () => { await store.close() })
  const registry = fastify.entityRegistry
  fastify.decorate('events', {
    kind: store.kind,
    query: (query: EventQuery) => keepStoreContract(store, query, registry),
    health: () => store.health()
  })
}, { name: 'event-store', dependencies: ['entity-registry'], fastify: '5.x' })
