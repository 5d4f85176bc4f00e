import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../../config-error.js'

const text = (description: string, pattern: string) => Type.Optional(Type.String({ description, pattern }))

/** The variables STORE=influxdb reads; each description is what a bad value is told. */
export const InfluxEnvironment = Type.Object({
  INFLUX_URL: text('the http(s) URL of an InfluxDB server', '^https?://\\S+$'),
  INFLUX_TOKEN: text('an InfluxDB API token', '^\\S+$'),
  INFLUX_ORG: text('an InfluxDB organisation name or ID', '\\S'),
  INFLUX_BUCKET: text('an InfluxDB bucket name', '\\S'),
  INFLUX_DATABASE: text('an InfluxDB database name (InfluxQL)', '\\S'),
  INFLUX_USERNAME: text('an InfluxDB user name', '\\S'),
  INFLUX_PASSWORD: text('an InfluxDB password', '[\\s\\S]'),
  INFLUX_QUERY_LANGUAGE: Type.Optional(Type.Union([Type.Literal('flux'), Type.Literal('influxql')], { description: 'one of: flux, influxql' })),
  INFLUX_MEASUREMENT: text('a measurement name', '\\S'),
  INFLUX_TIMEOUT_MS: text('a time in milliseconds from 1 to 600000', '^[1-9]\\d{0,5}$'),
  INFLUX_MAX_SCANS: text('a number of queries from 1 to 1000', '^([1-9]\\d{0,2}|1000)$')
})

export type InfluxVariables = Static<typeof InfluxEnvironment>

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

/** Which dialect follows from the variables given; missing or contradictory ones are named. */
export function influxSettings (env: InfluxVariables): InfluxSettings {
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

function required (env: InfluxVariables, name: keyof InfluxVariables, neededBy: string): string {
  const value = env[name]
  if (value === undefined) throw new ConfigError(`${name} is required by ${neededBy}`)
  return value
}

/** Where the events are, in words. */
export function describeInflux (settings: InfluxSettings): string {
  const target = settings.dialect === 'flux' ? `bucket ${settings.bucket}` : `database ${settings.database}`
  return `InfluxDB at ${settings.url}, ${target}, measurement ${settings.measurement}`
}
