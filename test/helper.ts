import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import type { Config } from '../src/config.js'
import { projectRoot } from '../src/project-root.js'

export const fixturesDir = join(projectRoot, 'test', 'fixtures')

export const TOKEN = 'test-token-1'
export const OTHER_TOKEN = 'test-token-2'
export const AUTH = { authorization: `Bearer ${TOKEN}` }

export function testConfig (overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    apiTokens: [TOKEN, OTHER_TOKEN],
    generatedToken: false,
    store: 'memory',
    eventsFile: join(fixturesDir, 'events.ndjson'),
    entitiesFile: join(fixturesDir, 'entities.json'),
    specificationsFile: join(fixturesDir, 'specifications.json'),
    logLevel: 'silent',
    influx: undefined,
    workers: 1,
    ...overrides
  }
}

interface Teardown {
  teardown (fn: () => unknown): void
}

/** A ready provider on the test fixtures (or the given configuration), closed when the test ends. */
export async function build (t: Teardown, overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(overrides))
  t.teardown(() => app.close())
  return app
}
