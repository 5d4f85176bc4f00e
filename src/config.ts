import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
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
  /** Processes serving on the port (node:cluster); 1 runs in this process alone. */
  workers: number
  /** Set when STORE=influxdb. */
  influx: InfluxSettings | undefined
}

interface InfluxCommon {
  url: string
  measurement: string
  timeoutMs: number
  /** Queries that scan every series of their window (no device, space or code) running at once. */
  maxScans: number
}

/** InfluxQL over the 1.x-compatible /query and /write (InfluxDB 1.x, 2.x's v1 API, 3.x). */
export interface InfluxQLSettings extends InfluxCommon {
  dialect: 'influxql'
  database: string
  token: string | undefined
  username: string | undefined
  password: string | undefined
}

/** Flux and the v2 write API (InfluxDB 2.x). */
export interface FluxSettings extends InfluxCommon {
  dialect: 'flux'
  token: string
  org: string
  bucket: string
}

export type InfluxSettings = InfluxQLSettings | FluxSettings

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
    logLevel: env_.LOG_LEVEL ?? 'info',
    workers: env_.WORKERS === undefined ? 1 : env_.WORKERS === 'auto' ? availableParallelism() : Number(env_.WORKERS),
    influx: (env_.STORE ?? 'memory') === 'influxdb' ? influxSettings(env_) : undefined
  }
}

/** Which dialect follows from the variables given; missing or contradictory ones are named. */
export function influxSettings (env: Environment): InfluxSettings {
  const common = {
    url: required(env, 'INFLUX_URL', 'STORE=influxdb').replace(/\/+$/, ''),
    measurement: env.INFLUX_MEASUREMENT ?? 'event',
    timeoutMs: Number(env.INFLUX_TIMEOUT_MS ?? 5000),
    maxScans: Number(env.INFLUX_MAX_SCANS ?? 1)
  }
  let dialect = env.INFLUX_QUERY_LANGUAGE
  if (dialect === undefined) {
    if (env.INFLUX_BUCKET !== undefined && env.INFLUX_DATABASE !== undefined) {
      throw new ConfigError('INFLUX_BUCKET and INFLUX_DATABASE are both set: set INFLUX_QUERY_LANGUAGE=flux or influxql to say which to use')
    }
    if (env.INFLUX_BUCKET === undefined && env.INFLUX_DATABASE === undefined) {
      throw new ConfigError('STORE=influxdb needs INFLUX_BUCKET (Flux, InfluxDB 2.x) or INFLUX_DATABASE (InfluxQL)')
    }
    dialect = env.INFLUX_BUCKET !== undefined ? 'flux' : 'influxql'
  }
  if (dialect === 'flux') {
    return {
      ...common,
      dialect,
      token: required(env, 'INFLUX_TOKEN', 'the Flux dialect'),
      org: required(env, 'INFLUX_ORG', 'the Flux dialect'),
      bucket: required(env, 'INFLUX_BUCKET', 'the Flux dialect')
    }
  }
  if (env.INFLUX_TOKEN !== undefined && (env.INFLUX_USERNAME !== undefined || env.INFLUX_PASSWORD !== undefined)) {
    throw new ConfigError('INFLUX_TOKEN and INFLUX_USERNAME/INFLUX_PASSWORD are both set: give one way to authenticate')
  }
  if ((env.INFLUX_USERNAME === undefined) !== (env.INFLUX_PASSWORD === undefined)) {
    throw new ConfigError('INFLUX_USERNAME and INFLUX_PASSWORD go together: set both or neither')
  }
  return {
    ...common,
    dialect,
    database: required(env, 'INFLUX_DATABASE', 'the InfluxQL dialect'),
    token: env.INFLUX_TOKEN,
    username: env.INFLUX_USERNAME,
    password: env.INFLUX_PASSWORD
  }
}

function required (env: Environment, name: keyof Environment, neededBy: string): string {
  const value = env[name]
  if (value === undefined) throw new ConfigError(`${name} is required by ${neededBy}`)
  return value
}
