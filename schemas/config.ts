import { Type, type Static } from '@sinclair/typebox'

const text = (description: string, pattern?: string) =>
  Type.Optional(Type.String(pattern === undefined ? { description } : { description, pattern }))

/**
 * The variables every provider reads, as strings; each store adds its own (its descriptor's
 * `environment`, src/store/<name>/index.ts), and STORE chooses one. Each description is what a
 * bad value is told, so it says what the variable must hold.
 */
export const CommonEnvironment = Type.Object({
  PORT: text('a TCP port number from 0 to 65535', '^(0|[1-9]\\d{0,4})$'),
  HOST: text('an address or host name to listen on', '^\\S+$'),
  TLS_CERT_FILE: text('the path of a PEM file with the server\'s certificate (and its chain)', '\\S'),
  TLS_KEY_FILE: text('the path of a PEM file with the certificate\'s private key', '\\S'),
  API_TOKENS: text(
    'a comma separated list of bearer tokens (each of letters, digits and -._~+/, optionally ending in =)',
    '^\\s*[A-Za-z0-9\\-._~+/]+=*\\s*(,\\s*[A-Za-z0-9\\-._~+/]+=*\\s*)*$'
  ),
  INGEST_TOKENS: text(
    'a comma separated list of bearer tokens allowed to post events (each of letters, digits and -._~+/, optionally ending in =)',
    '^\\s*[A-Za-z0-9\\-._~+/]+=*\\s*(,\\s*[A-Za-z0-9\\-._~+/]+=*\\s*)*$'
  ),
  INGEST_MAX_BYTES: text('a size in bytes from 1024 to 1073741824', '^[1-9]\\d{3,9}$'),
  INGEST_MAX_BYTES_IN_FLIGHT: text('a size in bytes from 1024 to 1099511627776, at least INGEST_MAX_BYTES', '^[1-9]\\d{3,12}$'),
  INGEST_MAX_LINES: text('a number of lines from 1 to 10000000', '^([1-9]\\d{0,6}|10000000)$'),
  STREAM_RETENTION: text(
    'how long and how many accepted events the stream keeps for resuming: a duration (like 24h, 90m, 3600s, 2d), a number of events, or both separated by a comma',
    '^\\s*(\\d+(ms|s|m|h|d)|\\d+)\\s*(,\\s*(\\d+(ms|s|m|h|d)|\\d+)\\s*)?$'
  ),
  STREAM_HEARTBEAT_MS: text('a time in milliseconds from 100 to 3600000', '^([1-9]\\d{2,5}|[1-2]\\d{6}|3[0-5]\\d{5}|3600000)$'),
  STREAM_MAX_CLIENTS: text('a number of streams from 0 to 1000000', '^(\\d{1,6}|1000000)$'),
  STREAM_MAX_CLIENTS_PER_TOKEN: text('a number of streams from 1 to 1000000', '^([1-9]\\d{0,5}|1000000)$'),
  STREAM_MAX_BUFFER_BYTES: text('a size in bytes from 1024 to 1073741824', '^[1-9]\\d{3,9}$'),
  STREAM_MAX_UNSENT_BYTES: text('a size in bytes from 1024 to 1099511627776, at least STREAM_MAX_BUFFER_BYTES', '^[1-9]\\d{3,12}$'),
  MQTT_URL: text('an mqtt:// or mqtts:// URL of an MQTT broker', '^mqtts?://\\S+$'),
  MQTT_USERNAME: text('a user name for the MQTT broker'),
  MQTT_PASSWORD: text('a password for the MQTT broker'),
  MQTT_TOPIC_PREFIX: text('a topic prefix without wildcards, like svc/v2/events', '^[^+#\\u0000]*[^/+#\\u0000]$'),
  MQTT_QUEUE_MAX: text('a number of events from 1 to 100000000', '^[1-9]\\d{0,8}$'),
  TOKENS_FILE: text('the path of a JSON tokens file', '\\S'),
  JWT_JWKS_URL: text('an http:// or https:// URL of a JSON Web Key Set', '^https?://\\S+$'),
  JWT_ISSUER: text('the issuer (iss) of accepted JWTs', '\\S'),
  JWT_AUDIENCE: text('the audience (aud) of accepted JWTs', '\\S'),
  RATE_LIMIT: text('a number of requests per second, minute, hour or day, like 600/minute', '^[1-9]\\d{0,8}/(second|minute|hour|day)$'),
  // The form only: that each origin is one as browsers send it is checked by config.ts (corsOriginsOf).
  CORS_ORIGINS: text('* or a comma separated list of origins like https://app.example.com', '^(\\*|\\s*https?://[^\\s,]+\\s*(,\\s*https?://[^\\s,]+\\s*)*)$'),
  SERVICE_SEGMENT: text('the first path segment of the interface: letters, digits, -, ., _ or ~, other than . and ..', '^(?!\\.{1,2}$)[A-Za-z0-9._~-]+$'),
  METRICS_PORT: text('a TCP port number from 1 to 65535', '^[1-9]\\d{0,4}$'),
  METRICS_TOKEN: text(
    'a bearer token for GET /metrics (letters, digits and -._~+/, optionally ending in =)',
    '^[A-Za-z0-9\\-._~+/]+=*$'
  ),
  ENTITIES_FILE: text('the path of a JSON entities file', '\\S'),
  SPECIFICATIONS_FILE: text('the path of a JSON specifications file, or none', '\\S'),
  REQUEST_TIMEOUT_MS: text('a time in milliseconds from 100 to 600000', '^([1-9]\\d{2,4}|[1-5]\\d{5}|600000)$'),
  IDLE_TIMEOUT_MS: text('a time in milliseconds from 1000 to 3600000', '^([1-9]\\d{3,5}|[1-2]\\d{6}|3[0-5]\\d{5}|3600000)$'),
  MAX_CONNECTIONS: text('a number of connections from 1 to 1000000', '^([1-9]\\d{0,5}|1000000)$'),
  MAX_REQUESTS_IN_FLIGHT: text('a number of requests from 1 to 100000', '^([1-9]\\d{0,4}|100000)$'),
  MAX_PIPELINED_REQUESTS: text('a number of requests from 0 to 1000', '^(\\d{1,3}|1000)$'),
  MAX_EVENT_LOOP_DELAY_MS: text('a time in milliseconds from 10 to 60000', '^([1-9]\\d{1,3}|[1-5]\\d{4}|60000)$'),
  WORKERS: text('auto (one per core) or a number of worker processes from 1 to 64', '^(auto|[1-9]|[1-5]\\d|6[0-4])$'),
  LOG_LEVEL: Type.Optional(Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { description: 'one of: fatal, error, warn, info, debug, trace, silent' }
  ))
})

export type CommonEnvironment = Static<typeof CommonEnvironment>
