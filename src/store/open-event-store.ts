import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import type { EventStore } from './event-store.js'
import { openInfluxEventStore } from './influx/open-influx-store.js'
import { collectLoadGarbage } from './collect-load-garbage.js'
import { loadMemoryEventStore } from './load-memory-store.js'

/** Builds the store STORE names. */
export async function openEventStore (config: Config, registry: EntityRegistry, log: FastifyBaseLogger): Promise<EventStore> {
  switch (config.store) {
    case 'memory': {
      const store = await loadMemoryEventStore(config.eventsFile, registry)
      const collected = collectLoadGarbage()
      log.info({ file: config.eventsFile, events: store.size, loadGarbageCollected: collected }, 'events loaded into the memory store')
      return store
    }
    case 'influxdb': {
      const settings = config.influx!
      const store = openInfluxEventStore(settings, registry)
      log.info({ url: settings.url, dialect: settings.dialect, measurement: settings.measurement }, 'events are read from InfluxDB')
      return store
    }
  }
}
