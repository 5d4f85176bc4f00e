import { defineStore } from '../store-descriptor.js'
import { FluxBackend } from './flux-backend.js'
import type { InfluxBackend } from './influx-backend.js'
import { InfluxEventStore } from './influx-event-store.js'
import { InfluxEventWriter } from './influx-event-writer.js'
import { describeInflux, InfluxEnvironment, influxSettings, type InfluxSettings } from './influx-settings.js'
import { InfluxQLBackend } from './influxql-backend.js'

export function createInfluxBackend (settings: InfluxSettings): InfluxBackend {
  return settings.dialect === 'flux' ? new FluxBackend(settings) : new InfluxQLBackend(settings)
}

/**
 * STORE=influxdb: events as points in InfluxDB, in the Flux (2.x) or InfluxQL (1.x API) dialect.
 * Connects lazily: the provider starts, and reports not ready, while InfluxDB is down.
 */
export const influxStore = defineStore({
  name: 'influxdb',
  environment: InfluxEnvironment,
  settings: influxSettings,
  describe: describeInflux,
  async open (settings, { log }) {
    log.info({ url: settings.url, dialect: settings.dialect, measurement: settings.measurement }, 'events are read from InfluxDB')
    return new InfluxEventStore(createInfluxBackend(settings), settings.maxScans, settings.measurement, log)
  },
  openWriter: (settings) => new InfluxEventWriter(createInfluxBackend(settings), settings.measurement)
})
