import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import type { ConfiguredStore } from '../src/store/store-descriptor.js'
import { projectRoot } from '../src/project-root.js'

export const fixturesDir = join(projectRoot, 'test', 'fixtures')

export const TOKEN = 'test-token-1'
export const OTHER_TOKEN = 'test-token-2'
export const AUTH = { authorization: `Bearer ${TOKEN}` }
export const INGEST_TOKEN = 'test-ingest-token'
export const INGEST_AUTH = { authorization: `Bearer ${INGEST_TOKEN}` }

/** The store a user would get with these variables (STORE and the store's own). */
export function storeFromEnv (env: Record<string, string>): ConfiguredStore {
  return loadConfig(env).store
}

const defaults = loadConfig({})

/** The test configuration; `eventsFile` is the memory store's EVENTS_FILE (the fixtures by default). */
export function testConfig ({ eventsFile, ...overrides }: Partial<Config> & { eventsFile?: string } = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    tls: undefined,
    apiTokens: [TOKEN, OTHER_TOKEN],
    generatedToken: false,
    ingestTokens: [INGEST_TOKEN],
    generatedIngestToken: false,
    ingestMaxBytes: defaults.ingestMaxBytes,
    ingestMaxLines: defaults.ingestMaxLines,
    ingestMaxBytesInFlight: defaults.ingestMaxBytesInFlight,
    stream: defaults.stream,
    mqtt: undefined,
    metricsToken: undefined,
    tokensFile: undefined,
    rateLimit: undefined,
    corsOrigins: undefined,
    serviceSegment: 'svc',
    metricsPort: undefined,
    jwt: undefined,
    store: storeFromEnv({ STORE: 'memory', EVENTS_FILE: eventsFile ?? join(fixturesDir, 'events.ndjson') }),
    entitiesFile: join(fixturesDir, 'entities.json'),
    specificationsFile: join(fixturesDir, 'specifications.json'),
    logLevel: 'silent',
    workers: 1,
    limits: defaults.limits,
    ...overrides
  }
}

/**
 * An events file of `count` events of the fixtures' soap-001 in bldg-a/floor-1, one a second from
 * 2025-01-01 (alerts and notifications in turns), in `dir`: answers large enough to stream.
 */
export function manyEvents (dir: string, count: number): string {
  const file = join(dir, 'events.ndjson')
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({
    message_id: `bulk-${i}`, message_code: i % 2 === 0 ? 'EMPTY' : 'LOW_LEVEL', message_category: i % 2 === 0 ? 'alert' : 'notification', date_time: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1'
  })).join('\n') + '\n')
  return file
}

interface Teardown {
  teardown (fn: () => unknown): void
}

/** A ready provider on the test fixtures (or the given configuration), closed when the test ends. */
export async function build (t: Teardown, overrides: Parameters<typeof testConfig>[0] = {}, serverOverrides: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(overrides), serverOverrides)
  t.teardown(() => app.close())
  return app
}

/**
 * The fixtures' memory store, whose health (asked before a stream's replay) waits until the test
 * lets it go: the memory store answers at once, InfluxDB's ping can take seconds.
 */
export function storeWithHeldHealth (eventsFile = join(fixturesDir, 'events.ndjson')): { store: ConfiguredStore, asked: () => boolean, letGo: () => void } {
  let letGo: () => void = () => {}
  const held = new Promise<void>((resolve) => { letGo = resolve })
  let asked = false
  const memory = storeFromEnv({ STORE: 'memory', EVENTS_FILE: eventsFile })
  const store: ConfiguredStore = {
    ...memory,
    open: async (context) => {
      const opened = await memory.open(context)
      return new Proxy(opened, {
        get (target, property) {
          if (property === 'health') return async () => { asked = true; await held; return await target.health() }
          const value = Reflect.get(target, property) as unknown
          return typeof value === 'function' ? value.bind(target) : value
        }
      })
    }
  }
  return { store, asked: () => asked, letGo: () => letGo() }
}
