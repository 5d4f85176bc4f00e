import fp from 'fastify-plugin'
import type { Config } from '../src/config.js'
import type { EventStore } from '../src/store/event-store.js'
import { openEventStore } from '../src/store/open-event-store.js'

declare module 'fastify' {
  interface FastifyInstance {
    eventStore: EventStore
  }
}

export interface EventStoreOptions {
  config: Config
}

/** The store behind the events endpoint, chosen by STORE; the routes see only the EventStore interface. */
export default fp<EventStoreOptions>(async function eventStore (fastify, options) {
  const store = await openEventStore(options.config, fastify.entityRegistry, fastify.log)
  fastify.decorate('eventStore', store)
  fastify.addHook('onClose', async () => { await store.close() })
}, { name: 'event-store', dependencies: ['entity-registry'] })
