import fp from 'fastify-plugin'
import type { StoredEvent } from '../src/data/event-lines.js'
import type { EventBatches, EventQuery, StoreHealth } from '../src/store/event-store.js'
import type { IngestEvent, WriteOutcome } from '../src/store/event-writer.js'
import type { ConfiguredStore } from '../src/store/store-descriptor.js'
import { keepStoreContract } from '../src/store/store-contract.js'
import { warnOfUnknownEntityEvents } from '../src/store/unknown-entity-events.js'

/** The events the provider serves: the configured store's answers, held to the contract every store keeps. */
export interface ServedEvents {
  /** What kind of store answers (for the readiness probe). */
  readonly kind: string
  /** The events of a query, in batches, through keepStoreContract (src/store/store-contract.ts). */
  query (query: EventQuery): EventBatches
  health (): Promise<StoreHealth>
  /** Stores ingested events durably (EventStore.writeEvents). */
  write (events: readonly IngestEvent[]): Promise<WriteOutcome>
  /** Events another worker wrote into the same store, for a store each process keeps a copy of. */
  takeWrittenElsewhere (events: readonly StoredEvent[]): void
  /** Events other workers wrote into the same store while this one loaded it (EventStore.takeAppendedSinceLoad); 0 for other stores. */
  takeAppendedSinceLoad (): Promise<number>
  /** Events at the end of the store that no worker announced (EventStore.takeUnannounced), now served; none for other stores. */
  takeUnannounced (): Promise<readonly StoredEvent[]>
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
  // Events the registry does not know are kept but never served: say so once, with a few of them.
  warnOfUnknownEntityEvents(store, fastify.entityRegistry, fastify.log)
  fastify.addHook('onClose', async () => { await store.close() })
  fastify.decorate('events', {
    kind: store.kind,
    // The registry of the moment: it is swapped whole when its file is reloaded.
    query: (query: EventQuery) => keepStoreContract(store, query, fastify.entityRegistry),
    health: () => store.health(),
    write: (events: readonly IngestEvent[]) => store.writeEvents(events),
    takeWrittenElsewhere: (events: readonly StoredEvent[]) => store.takeWrittenElsewhere?.(events),
    takeAppendedSinceLoad: async () => await store.takeAppendedSinceLoad?.() ?? 0,
    takeUnannounced: async () => await store.takeUnannounced?.() ?? []
  })
}, { name: 'event-store', dependencies: ['entity-registry'], fastify: '5.x' })
