import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { Type, type TObject } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { CommonEnvironment } from '../schemas/config.js'
import type { JwtSettings } from './auth/jwt-verifier.js'
import { ConfigError } from './config-error.js'
import { readCertificatePair, type CertificatePair } from './http/certificate-pair.js'
import { demoDataDir } from './project-root.js'
import { configureStore, type ConfiguredStore, type StoreDescriptor } from './store/store-descriptor.js'
import { storeDescriptors } from './store/stores.js'

export { ConfigError }

export type LogLevel = NonNullable<CommonEnvironment['LOG_LEVEL']>

export interface Config {
  port: number
  host: string
  /** TLS_CERT_FILE and TLS_KEY_FILE, read: the port speaks HTTPS; undefined: plain HTTP. */
  tls: CertificatePair | undefined
  /** Bearer tokens the provider accepts. */
  apiTokens: string[]
  /** True when no API_TOKENS was given and a random one was made for this run. */
  generatedToken: boolean
  /** Bearer tokens that may post events to /ingest/events (and only that). */
  ingestTokens: string[]
  /** True when no INGEST_TOKENS was given and a random one was made for this run. */
  generatedIngestToken: boolean
  /** The largest ingest body accepted (413 payload_too_large beyond). */
  ingestMaxBytes: number
  /** INGEST_MAX_BYTES_IN_FLIGHT: ingest bodies being received or read at once, in bytes (503 beyond). */
  ingestMaxBytesInFlight: number
  /** INGEST_MAX_LINES: an ingest body of more lines (or array elements) is 413 payload_too_large. */
  ingestMaxLines: number
  stream: StreamSettings
  /** RATE_LIMIT: requests per token per window; undefined: none. */
  rateLimit: { max: number, windowMs: number, text: string } | undefined
  /** CORS_ORIGINS: '*', a list of origins, or undefined: no CORS headers. */
  corsOrigins: '*' | string[] | undefined
  /** The interface's first path segment (SERVICE_SEGMENT): `/<segment>/v2/events`. */
  serviceSegment: string
  /** METRICS_PORT: /metrics on a port of its own as well. */
  metricsPort: number | undefined
  /** TOKENS_FILE: named, possibly scoped tokens. */
  tokensFile: string | undefined
  /** JWT_*: OAuth2 access tokens of an identity provider; undefined: none accepted. */
  jwt: JwtSettings | undefined
  /** The bearer token of GET /metrics; undefined: the endpoint is not served. */
  metricsToken: string | undefined
  /** undefined without MQTT_URL: no MQTT, the in-process bus. */
  mqtt: MqttSettings | undefined
  /** The store STORE chose, with its settings read. */
  store: ConfiguredStore
  entitiesFile: string
  /** undefined when SPECIFICATIONS_FILE=none: the endpoint answers 204 not_implemented. */
  specificationsFile: string | undefined
  logLevel: LogLevel
  /** Processes serving on the port (node:cluster); 1 runs in this process alone. */
  workers: number
  limits: Limits
}

/** What one client, and all of them, may cost the provider (README, "Limits and timeouts"). */
export interface Limits {
  /** A request's line and headers must have arrived within this (408 request_timeout). */
  requestTimeoutMs: number
  /** A connection with nothing received or sent for this long is closed. */
  idleTimeoutMs: number
  maxConnections: number
  maxRequestsInFlight: number
  maxPipelinedRequests: number
  maxEventLoopDelayMs: number
  /** What Retry-After says on a 503. */
  retryAfterSeconds: number
}

/** The live stream's bounds (README, "Push over Server-Sent Events"). */
export interface StreamSettings {
  /** Accepted events kept for resuming with Last-Event-ID: at most this many ... */
  retentionEvents: number
  /** ... and none older than this. */
  retentionMs: number
  heartbeatMs: number
  maxClients: number
  /** Of them, at most this many opened with one token. */
  maxClientsPerToken: number
  /** A subscriber whose unsent data passes this is disconnected. */
  maxBufferBytes: number
  /** All streams' unsent data together (shared frames once): past it, those furthest behind are disconnected. */
  maxUnsentBytes: number
}

export interface MqttSettings {
  url: string
  username: string | undefined
  password: string | undefined
  topicPrefix: string
  /** Events waiting for the broker beyond this: the oldest are dropped (logged, counted). */
  queueMax: number
}

/** Every variable the provider reads: the common ones, STORE, and every store's own. */
export const Environment = Type.Composite([
  CommonEnvironment,
  Type.Object({
    STORE: Type.Optional(Type.Union(storeDescriptors.map(({ name }) => Type.Literal(name)), {
      description: 'one of: ' + storeDescriptors.map(({ name }) => name).join(', ')
    }))
  }),
  ...storeDescriptors.map(({ environment }) => environment as TObject)
])

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
  const common = values as CommonEnvironment
  const port = Number(common.PORT ?? 8080)
  if (port > 65535) throw new ConfigError(`PORT must be a TCP port number from 0 to 65535; got ${JSON.stringify(common.PORT)}`)
  // Their patterns take four to ten digits; the range their descriptions give is checked here.
  for (const name of ['INGEST_MAX_BYTES', 'STREAM_MAX_BUFFER_BYTES'] as const) {
    const size = common[name] === undefined ? undefined : Number(common[name])
    if (size !== undefined && (size < 1024 || size > 1024 * 1024 * 1024)) throw new ConfigError(`${name} must be a size in bytes from 1024 to 1073741824; got ${JSON.stringify(common[name])}`)
  }
  const ingestMaxBytes = Number(common.INGEST_MAX_BYTES ?? 16 * 1024 * 1024)
  const ingestMaxBytesInFlight = Number(common.INGEST_MAX_BYTES_IN_FLIGHT ?? Math.max(256 * 1024 * 1024, ingestMaxBytes))
  // A body of INGEST_MAX_BYTES (or a chunked one, counted as such) could otherwise never be taken.
  if (ingestMaxBytesInFlight < 1024 || ingestMaxBytesInFlight > 2 ** 40 || ingestMaxBytesInFlight < ingestMaxBytes) throw new ConfigError(`INGEST_MAX_BYTES_IN_FLIGHT must be a size in bytes from 1024 to 1099511627776, at least INGEST_MAX_BYTES (${ingestMaxBytes}); got ${JSON.stringify(common.INGEST_MAX_BYTES_IN_FLIGHT)}`)
  const streamMaxBufferBytes = Number(common.STREAM_MAX_BUFFER_BYTES ?? 1024 * 1024)
  const streamMaxUnsentBytes = Number(common.STREAM_MAX_UNSENT_BYTES ?? Math.max(512 * 1024 * 1024, streamMaxBufferBytes))
  // One stream at its own bound would otherwise be over the bound of them all.
  if (streamMaxUnsentBytes > 2 ** 40 || streamMaxUnsentBytes < streamMaxBufferBytes) throw new ConfigError(`STREAM_MAX_UNSENT_BYTES must be a size in bytes from 1024 to 1099511627776, at least STREAM_MAX_BUFFER_BYTES (${streamMaxBufferBytes}); got ${JSON.stringify(common.STREAM_MAX_UNSENT_BYTES)}`)
  const metricsPort = common.METRICS_PORT === undefined ? undefined : Number(common.METRICS_PORT)
  if (metricsPort !== undefined && metricsPort > 65535) throw new ConfigError(`METRICS_PORT must be a TCP port number from 1 to 65535; got ${JSON.stringify(common.METRICS_PORT)}`)
  // /metrics is served only with its token: a port without one would be a port that serves nothing.
  if (metricsPort !== undefined && common.METRICS_TOKEN === undefined) throw new ConfigError('METRICS_PORT needs METRICS_TOKEN: /metrics is served only to the bearer of METRICS_TOKEN')
  if (metricsPort !== undefined && metricsPort === port) throw new ConfigError(`METRICS_PORT must differ from PORT (${port}): /metrics is served on PORT already`)
  const orphanedMqtt = (['MQTT_USERNAME', 'MQTT_PASSWORD', 'MQTT_TOPIC_PREFIX', 'MQTT_QUEUE_MAX'] as const).filter((name) => common[name] !== undefined)
  if (common.MQTT_URL === undefined && orphanedMqtt.length > 0) {
    throw new ConfigError(`${orphanedMqtt.join(' and ')} ${orphanedMqtt.length === 1 ? 'is' : 'are'} set without MQTT_URL: nothing is published without a broker (set MQTT_URL, or unset ${orphanedMqtt.length === 1 ? 'it' : 'them'})`)
  }

  const apiTokens = common.API_TOKENS === undefined
    ? [randomBytes(24).toString('base64url')]
    : [...new Set(common.API_TOKENS.split(',').map((token) => token.trim()))]

  return {
    port,
    host: common.HOST ?? '0.0.0.0',
    tls: tlsSettings(common.TLS_CERT_FILE, common.TLS_KEY_FILE),
    apiTokens,
    generatedToken: common.API_TOKENS === undefined,
    ingestTokens: common.INGEST_TOKENS === undefined
      ? [randomBytes(24).toString('base64url')]
      : [...new Set(common.INGEST_TOKENS.split(',').map((token) => token.trim()))],
    generatedIngestToken: common.INGEST_TOKENS === undefined,
    ingestMaxBytes,
    ingestMaxLines: Number(common.INGEST_MAX_LINES ?? 100_000),
    ingestMaxBytesInFlight,
    stream: {
      ...streamRetention(common.STREAM_RETENTION ?? '24h,1000000'),
      heartbeatMs: Number(common.STREAM_HEARTBEAT_MS ?? 15_000),
      maxClients: Number(common.STREAM_MAX_CLIENTS ?? 10_000),
      // Unset: no share of its own (one consumer may open them all, as the interface's single-consumer reading has it).
      maxClientsPerToken: Number(common.STREAM_MAX_CLIENTS_PER_TOKEN ?? common.STREAM_MAX_CLIENTS ?? 10_000),
      maxBufferBytes: streamMaxBufferBytes,
      maxUnsentBytes: streamMaxUnsentBytes
    },
    metricsToken: common.METRICS_TOKEN,
    metricsPort,
    rateLimit: rateLimitOf(common.RATE_LIMIT),
    corsOrigins: corsOriginsOf(common.CORS_ORIGINS),
    serviceSegment: common.SERVICE_SEGMENT ?? 'svc',
    tokensFile: common.TOKENS_FILE,
    jwt: jwtSettings(common),
    mqtt: common.MQTT_URL === undefined
      ? undefined
      : {
          url: common.MQTT_URL,
          username: common.MQTT_USERNAME,
          password: common.MQTT_PASSWORD,
          topicPrefix: common.MQTT_TOPIC_PREFIX ?? 'svc/v2/events',
          queueMax: Number(common.MQTT_QUEUE_MAX ?? 100_000)
        },
    store: chooseStore(values),
    entitiesFile: common.ENTITIES_FILE ?? join(demoDataDir, 'entities.json'),
    specificationsFile: common.SPECIFICATIONS_FILE === 'none'
      ? undefined
      : common.SPECIFICATIONS_FILE ?? join(demoDataDir, 'specifications.json'),
    logLevel: common.LOG_LEVEL ?? 'info',
    workers: common.WORKERS === undefined ? 1 : common.WORKERS === 'auto' ? availableParallelism() : Number(common.WORKERS),
    limits: {
      requestTimeoutMs: Number(common.REQUEST_TIMEOUT_MS ?? 10_000),
      idleTimeoutMs: Number(common.IDLE_TIMEOUT_MS ?? 60_000),
      maxConnections: Number(common.MAX_CONNECTIONS ?? 10_000),
      maxRequestsInFlight: Number(common.MAX_REQUESTS_IN_FLIGHT ?? 1000),
      maxPipelinedRequests: Number(common.MAX_PIPELINED_REQUESTS ?? 16),
      maxEventLoopDelayMs: Number(common.MAX_EVENT_LOOP_DELAY_MS ?? 1000),
      retryAfterSeconds: 5
    }
  }
}

/** The three JWT variables go together: one without the others is a mistake, not a choice. */
function jwtSettings (common: CommonEnvironment): JwtSettings | undefined {
  const { JWT_JWKS_URL: jwksUrl, JWT_ISSUER: issuer, JWT_AUDIENCE: audience } = common
  if (jwksUrl === undefined && issuer === undefined && audience === undefined) return undefined
  if (jwksUrl === undefined || issuer === undefined || audience === undefined) {
    const missing = [['JWT_JWKS_URL', jwksUrl], ['JWT_ISSUER', issuer], ['JWT_AUDIENCE', audience]].filter(([, value]) => value === undefined).map(([name]) => name)
    throw new ConfigError(`${missing.join(' and ')} must be set too: JWTs are accepted only with JWT_JWKS_URL, JWT_ISSUER and JWT_AUDIENCE`)
  }
  if (!URL.canParse(jwksUrl)) throw new ConfigError(`JWT_JWKS_URL must be an http:// or https:// URL of a JSON Web Key Set; got ${JSON.stringify(jwksUrl)}`)
  return { jwksUrl, issuer, audience }
}

/**
 * CORS_ORIGINS as browsers send origins: @fastify/cors compares them as strings, so one written
 * otherwise (a default port, a path, a query, a user, capitals) could never match and is refused.
 */
function corsOriginsOf (text: string | undefined): Config['corsOrigins'] {
  if (text === undefined) return undefined
  if (text.trim() === '*') return '*'
  const origins = text.split(',').map((origin) => origin.trim())
  for (const origin of origins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must be * or a comma separated list of origins as browsers send them (scheme, host and port only, lower case, no default port, path or trailing slash); got ${JSON.stringify(origin)}${URL.canParse(origin) ? `, which a browser sends as ${JSON.stringify(new URL(origin).origin)}` : ''}`)
    }
  }
  return origins
}

const WINDOW_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }

function rateLimitOf (text: string | undefined): Config['rateLimit'] {
  if (text === undefined) return undefined
  const [max, window] = text.split('/') as [string, string]
  return { max: Number(max), windowMs: WINDOW_MS[window]!, text }
}

const DURATION_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** STREAM_RETENTION's duration and count, each unbounded when not given. */
function streamRetention (text: string): { retentionEvents: number, retentionMs: number } {
  let retentionEvents = Number.POSITIVE_INFINITY
  let retentionMs = Number.POSITIVE_INFINITY
  for (const part of text.split(',').map((item) => item.trim())) {
    const match = /^(\d+)(ms|s|m|h|d)?$/.exec(part)!
    if (match[2] === undefined) retentionEvents = Number(match[1])
    else retentionMs = Number(match[1]) * DURATION_MS[match[2]]!
  }
  return { retentionEvents, retentionMs }
}

/** The store STORE names (the first in the table by default), configured from its own variables. */
function chooseStore (values: Record<string, string>): ConfiguredStore {
  const name = values.STORE ?? storeDescriptors[0].name
  const descriptor = storeDescriptors.find((candidate) => candidate.name === name)!
  return configureStore(descriptor as StoreDescriptor<TObject, unknown>, values)
}

/** TLS_CERT_FILE and TLS_KEY_FILE: both or neither, each a readable PEM file, the two a pair. */
function tlsSettings (certFile: string | undefined, keyFile: string | undefined): CertificatePair | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined
  if (certFile === undefined || keyFile === undefined) {
    throw new ConfigError(`${certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'} must be set too: HTTPS needs both TLS_CERT_FILE and TLS_KEY_FILE`)
  }
  return readCertificatePair(certFile, keyFile)
}
