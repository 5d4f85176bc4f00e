import { Type, type Static } from '@sinclair/typebox'

const text = (description: string, pattern?: string) =>
  Type.Optional(Type.String(pattern === undefined ? { description } : { description, pattern }))

/**
 * The environment the provider reads, as strings. Each description is what a bad value is told,
 * so it says what the variable must hold.
 */
export const Environment = Type.Object({
  PORT: text('a TCP port number from 0 to 65535', '^(0|[1-9]\\d{0,4})$'),
  HOST: text('an address or host name to listen on', '^\\S+$'),
  API_TOKENS: text(
    'a comma separated list of bearer tokens (each of letters, digits and -._~+/, optionally ending in =)',
    '^\\s*[A-Za-z0-9\\-._~+/]+=*\\s*(,\\s*[A-Za-z0-9\\-._~+/]+=*\\s*)*$'
  ),
  STORE: Type.Optional(Type.Union([Type.Literal('memory'), Type.Literal('influxdb')], { description: 'one of: memory, influxdb' })),
  EVENTS_FILE: text('the path of an NDJSON events file', '\\S'),
  ENTITIES_FILE: text('the path of a JSON entities file', '\\S'),
  SPECIFICATIONS_FILE: text('the path of a JSON specifications file, or none', '\\S'),
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
  INFLUX_MAX_SCANS: text('a number of queries from 1 to 1000', '^([1-9]\\d{0,2}|1000)$'),
  WORKERS: text('auto (one per core) or a number of worker processes from 1 to 64', '^(auto|[1-9]|[1-5]\\d|6[0-4])$'),
  LOG_LEVEL: Type.Optional(Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { description: 'one of: fatal, error, warn, info, debug, trace, silent' }
  ))
})

export type Environment = Static<typeof Environment>
