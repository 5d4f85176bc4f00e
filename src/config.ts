import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { Environment } from '../schemas/config.js'
import { demoDataDir } from './project-root.js'

export type LogLevel = NonNullable<Environment['LOG_LEVEL']>

export interface Config {
  port: number
  host: string
  /** Bearer tokens the provider accepts. */
  apiTokens: string[]
  /** True when no API_TOKENS was given and a random one was made for this run. */
  generatedToken: boolean
  store: 'memory' | 'influxdb'
  eventsFile: string
  entitiesFile: string
  /** undefined when SPECIFICATIONS_FILE=none: the endpoint answers 204 not_implemented. */
  specificationsFile: string | undefined
  logLevel: LogLevel
}

/** A configuration that cannot run; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads and validates the environment once; throws a ConfigError naming the first bad variable. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const values: Record<string, string> = {}
  for (const name of Object.keys(Environment.properties)) {
    const value = env[name]
    // An empty variable counts as unset, as in most shells' `VAR= command`.
    if (value !== undefined && value !== '') values[name] = value
  }
  const error = Value.Errors(Environment, values).First()
  if (error !== undefined) {
    const name = error.path.slice(1)
    const description = (Environment.properties as Record<string, { description?: string }>)[name]?.description ?? error.message
    throw new ConfigError(`${name} must be ${description}; got ${JSON.stringify(values[name])}`)
  }
  const env_ = values as Environment
  const port = Number(env_.PORT ?? 8080)
  if (port > 65535) throw new ConfigError(`PORT must be a TCP port number from 0 to 65535; got ${JSON.stringify(env_.PORT)}`)

  const apiTokens = env_.API_TOKENS === undefined
    ? [randomBytes(24).toString('base64url')]
    : [...new Set(env_.API_TOKENS.split(',').map((token) => token.trim()))]

  return {
    port,
    host: env_.HOST ?? '0.0.0.0',
    apiTokens,
    generatedToken: env_.API_TOKENS === undefined,
    store: env_.STORE ?? 'memory',
    eventsFile: env_.EVENTS_FILE ?? join(demoDataDir, 'events.ndjson'),
    entitiesFile: env_.ENTITIES_FILE ?? join(demoDataDir, 'entities.json'),
    specificationsFile: env_.SPECIFICATIONS_FILE === 'none'
      ? undefined
      : env_.SPECIFICATIONS_FILE ?? join(demoDataDir, 'specifications.json'),
    logLevel: env_.LOG_LEVEL ?? 'info'
  }
}
