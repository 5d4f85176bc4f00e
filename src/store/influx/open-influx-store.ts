import type { InfluxSettings } from '../../config.js'
import type { EntityRegistry } from '../../registry/entity-registry.js'
import { FluxBackend } from './flux-backend.js'
import type { InfluxBackend } from './influx-backend.js'
import { InfluxEventStore } from './influx-event-store.js'
import { InfluxEventWriter } from './influx-event-writer.js'
import { InfluxQLBackend } from './influxql-backend.js'

export function createInfluxBackend (settings: InfluxSettings): InfluxBackend {
  return settings.dialect === 'flux' ? new FluxBackend(settings) : new InfluxQLBackend(settings)
}

/** Connects lazily: the provider starts, and reports not ready, while InfluxDB is down. */
export function openInfluxEventStore (settings: InfluxSettings, registry: EntityRegistry): InfluxEventStore {
  return new InfluxEventStore(createInfluxBackend(settings), registry, settings.maxScans)
}

export function openInfluxEventWriter (settings: InfluxSettings): InfluxEventWriter {
  return new InfluxEventWriter(createInfluxBackend(settings), settings.measurement)
}
