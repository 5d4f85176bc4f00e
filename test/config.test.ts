import t from 'tap'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../src/config.js'
import { demoDataDir } from '../src/project-root.js'
import { DEMO_EVENTS_FILE } from '../src/store/memory/index.js'

t.test('defaults: port 8080 on every interface, memory store on the demo data, a generated token', async (t) => {
  const config = loadConfig({})
  t.equal(config.port, 8080)
  t.equal(config.host, '0.0.0.0')
  t.equal(config.store.name, 'memory')
  t.same(config.store.settings, { eventsFile: DEMO_EVENTS_FILE, seedFile: join(demoDataDir, 'events.ndjson') }, 'a working copy of the demo events, so ingests never write into data/')
  t.equal(config.generatedIngestToken, true)
  t.not(config.ingestTokens[0], config.apiTokens[0], 'an ingest token of its own')
  t.equal(config.entitiesFile, join(demoDataDir, 'entities.json'))
  t.equal(config.specificationsFile, join(demoDataDir, 'specifications.json'))
  t.equal(config.logLevel, 'info')
  t.equal(config.generatedToken, true)
  t.equal(config.apiTokens.length, 1)
  t.ok(config.apiTokens[0]!.length >= 32, 'a long random token')
  t.not(loadConfig({}).apiTokens[0], config.apiTokens[0], 'a new token each start')
})

t.test('values are read', async (t) => {
  const config = loadConfig({
    PORT: '9000',
    HOST: '127.0.0.1',
    API_TOKENS: ' a1 ,b2,a1',
    EVENTS_FILE: '/e.ndjson',
    ENTITIES_FILE: '/n.json',
    SPECIFICATIONS_FILE: 'none',
    LOG_LEVEL: 'warn'
  })
  t.equal(config.port, 9000)
  t.equal(config.host, '127.0.0.1')
  t.same(config.apiTokens, ['a1', 'b2'], 'trimmed, repeats dropped')
  t.equal(config.generatedToken, false)
  t.same(config.store.settings, { eventsFile: '/e.ndjson' })
  t.equal(config.entitiesFile, '/n.json')
  t.equal(config.specificationsFile, undefined, 'none: not implemented')
  t.equal(config.logLevel, 'warn')
})

t.test('STREAM_MAX_CLIENTS_PER_TOKEN: unset, STREAM_MAX_CLIENTS (one token may open them all); set, its own', async (t) => {
  t.equal(loadConfig({}).stream.maxClientsPerToken, 10_000)
  t.equal(loadConfig({ STREAM_MAX_CLIENTS: '500' }).stream.maxClientsPerToken, 500)
  t.equal(loadConfig({ STREAM_MAX_CLIENTS: '500', STREAM_MAX_CLIENTS_PER_TOKEN: '20' }).stream.maxClientsPerToken, 20)
})

t.test('an empty variable counts as unset', async (t) => {
  t.equal(loadConfig({ PORT: '' }).port, 8080)
})

t.test('sizes at the ends of their range are taken', async (t) => {
  t.equal(loadConfig({ INGEST_MAX_BYTES: '1024' }).ingestMaxBytes, 1024)
  t.equal(loadConfig({ INGEST_MAX_BYTES: '1073741824' }).ingestMaxBytes, 1073741824)
  t.equal(loadConfig({ STREAM_MAX_BUFFER_BYTES: '1024' }).stream.maxBufferBytes, 1024)
  t.equal(loadConfig({ INGEST_MAX_LINES: '1' }).ingestMaxLines, 1)
  t.equal(loadConfig({ INGEST_MAX_LINES: '10000000' }).ingestMaxLines, 10_000_000)
  t.equal(loadConfig({}).ingestMaxLines, 100_000)
  t.equal(loadConfig({}).ingestMaxBytesInFlight, 256 * 1024 * 1024)
  t.equal(loadConfig({ INGEST_MAX_BYTES: '1073741824' }).ingestMaxBytesInFlight, 1073741824, 'at least one body of INGEST_MAX_BYTES')
  t.equal(loadConfig({ INGEST_MAX_BYTES_IN_FLIGHT: '16777216' }).ingestMaxBytesInFlight, 16777216)
  t.equal(loadConfig({}).stream.maxUnsentBytes, 512 * 1024 * 1024)
  t.equal(loadConfig({ STREAM_MAX_BUFFER_BYTES: '1073741824' }).stream.maxUnsentBytes, 1073741824, 'at least one stream\'s bound')
  t.equal(loadConfig({ STREAM_MAX_UNSENT_BYTES: '2097152' }).stream.maxUnsentBytes, 2097152)
})

t.test('a bad value is refused with a message naming the variable', async (t) => {
  const bad: Array<[Record<string, string>, string]> = [
    [{ PORT: 'http' }, 'PORT'],
    [{ PORT: '65536' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '08080' }, 'PORT'],
    [{ STORE: 'redis' }, 'STORE'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ API_TOKENS: ',' }, 'API_TOKENS'],
    [{ API_TOKENS: 'a b' }, 'API_TOKENS'],
    [{ HOST: 'two words' }, 'HOST'],
    [{ EVENTS_FILE: '   ' }, 'EVENTS_FILE'],
    // Four to ten digits, but outside the range the message gives.
    [{ INGEST_MAX_BYTES: '1000' }, 'INGEST_MAX_BYTES'],
    [{ INGEST_MAX_BYTES: '1073741825' }, 'INGEST_MAX_BYTES'],
    [{ STREAM_MAX_BUFFER_BYTES: '1023' }, 'STREAM_MAX_BUFFER_BYTES'],
    [{ STREAM_MAX_BUFFER_BYTES: '9999999999' }, 'STREAM_MAX_BUFFER_BYTES'],
    [{ INGEST_MAX_LINES: '0' }, 'INGEST_MAX_LINES'],
    [{ INGEST_MAX_LINES: '10000001' }, 'INGEST_MAX_LINES'],
    [{ INGEST_MAX_LINES: '1e5' }, 'INGEST_MAX_LINES'],
    [{ INGEST_MAX_BYTES_IN_FLIGHT: '2048', INGEST_MAX_BYTES: '4096' }, 'INGEST_MAX_BYTES_IN_FLIGHT'],
    [{ INGEST_MAX_BYTES_IN_FLIGHT: '1099511627777' }, 'INGEST_MAX_BYTES_IN_FLIGHT'],
    [{ INGEST_MAX_BYTES_IN_FLIGHT: '1000' }, 'INGEST_MAX_BYTES_IN_FLIGHT'],
    [{ STREAM_MAX_UNSENT_BYTES: '2048', STREAM_MAX_BUFFER_BYTES: '4096' }, 'STREAM_MAX_UNSENT_BYTES'],
    [{ STREAM_MAX_UNSENT_BYTES: '1048575' }, 'STREAM_MAX_UNSENT_BYTES'],
    [{ STREAM_MAX_UNSENT_BYTES: '1099511627777' }, 'STREAM_MAX_UNSENT_BYTES'],
    [{ STREAM_MAX_UNSENT_BYTES: '1000' }, 'STREAM_MAX_UNSENT_BYTES']
  ]
  for (const [env, name] of bad) {
    const value = Object.values(env)[0]!
    t.throws(() => loadConfig(env), ConfigError, `${name}=${value} is refused`)
    const message = (() => { try { loadConfig(env) } catch (error) { return (error as Error).message } })()
    t.ok(message?.startsWith(`${name} must be `) && message.endsWith(`; got ${JSON.stringify(value)}`), `names ${name} and its value: ${message}`)
  }
})

t.test('STORE=influxdb: the dialect follows from the variables; missing or contradictory ones are named', async (t) => {
  const base = { STORE: 'influxdb', INFLUX_URL: 'http://influx:8086/' }
  const influxql = loadConfig({ ...base, INFLUX_DATABASE: 'events', INFLUX_USERNAME: 'u', INFLUX_PASSWORD: 'p' }).store.settings
  t.match(influxql, { dialect: 'influxql', url: 'http://influx:8086', database: 'events', username: 'u', password: 'p', measurement: 'event', timeoutMs: 5000, maxScans: 1 })
  const flux = loadConfig({ ...base, INFLUX_BUCKET: 'b', INFLUX_ORG: 'o', INFLUX_TOKEN: 't', INFLUX_MEASUREMENT: 'm', INFLUX_TIMEOUT_MS: '250', INFLUX_MAX_SCANS: '4' }).store.settings
  t.match(flux, { dialect: 'flux', bucket: 'b', org: 'o', token: 't', measurement: 'm', timeoutMs: 250, maxScans: 4 })
  t.match(loadConfig({ ...base, INFLUX_BUCKET: 'b', INFLUX_DATABASE: 'd', INFLUX_QUERY_LANGUAGE: 'influxql' }).store.settings, { dialect: 'influxql', database: 'd' }, 'the override decides')
  t.equal(loadConfig({ INFLUX_URL: 'http://influx:8086' }).store.name, 'memory', 'InfluxDB settings are used only with STORE=influxdb')

  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ STORE: 'influxdb' }, /^INFLUX_URL is required by STORE=influxdb$/],
    [{ ...base }, /INFLUX_BUCKET \(Flux, InfluxDB 2.x\) or INFLUX_DATABASE \(InfluxQL\)/],
    [{ ...base, INFLUX_BUCKET: 'b', INFLUX_DATABASE: 'd' }, /INFLUX_BUCKET and INFLUX_DATABASE are both set: set INFLUX_QUERY_LANGUAGE/],
    [{ ...base, INFLUX_BUCKET: 'b', INFLUX_ORG: 'o' }, /^INFLUX_TOKEN is required by the Flux dialect$/],
    [{ ...base, INFLUX_BUCKET: 'b', INFLUX_TOKEN: 't' }, /^INFLUX_ORG is required by the Flux dialect$/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_QUERY_LANGUAGE: 'flux', INFLUX_TOKEN: 't', INFLUX_ORG: 'o' }, /^INFLUX_BUCKET is required by the Flux dialect$/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_USERNAME: 'u' }, /INFLUX_USERNAME and INFLUX_PASSWORD go together/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_TOKEN: 't', INFLUX_PASSWORD: 'p', INFLUX_USERNAME: 'u' }, /INFLUX_TOKEN and INFLUX_USERNAME\/INFLUX_PASSWORD are both set/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_QUERY_LANGUAGE: 'sql' }, /^INFLUX_QUERY_LANGUAGE must be one of: flux, influxql/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_TIMEOUT_MS: '0' }, /^INFLUX_TIMEOUT_MS must be/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_MAX_SCANS: '0' }, /^INFLUX_MAX_SCANS must be a number of queries from 1 to 1000; got "0"$/],
    [{ ...base, INFLUX_DATABASE: 'd', INFLUX_MAX_SCANS: '1001' }, /^INFLUX_MAX_SCANS must be/],
    [{ STORE: 'influxdb', INFLUX_URL: 'influx:8086', INFLUX_DATABASE: 'd' }, /^INFLUX_URL must be the http\(s\) URL/]
  ]
  for (const [env, message] of refused) t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
})

t.test('values that would start the provider silently weakened, or crash it later without naming the variable, stop it now', async (t) => {
  const refused = (env: Record<string, string>, name: RegExp) => t.throws(() => loadConfig(env), name, JSON.stringify(env))
  refused({ METRICS_TOKEN: 'm', METRICS_PORT: '70000' }, /METRICS_PORT must be a TCP port number from 1 to 65535/)
  refused({ METRICS_PORT: '9200' }, /METRICS_PORT needs METRICS_TOKEN/)
  refused({ JWT_JWKS_URL: 'http://[bad', JWT_ISSUER: 'i', JWT_AUDIENCE: 'a' }, /JWT_JWKS_URL must be an http:\/\/ or https:\/\/ URL/)
  refused({ CORS_ORIGINS: 'https://a.example/' }, /CORS_ORIGINS must be/)
  refused({ CORS_ORIGINS: 'https://a.example/app' }, /CORS_ORIGINS must be/)
  // Origins a browser never sends, so that they could never match one: refused as such.
  for (const origin of ['https://a.example:443', 'http://a.example:80', 'https://a.example?x', 'https://a.example#x', 'https://user@a.example', 'https://A.example']) {
    refused({ CORS_ORIGINS: origin }, /CORS_ORIGINS must be/)
  }
  t.same(loadConfig({ CORS_ORIGINS: 'http://[::1]:3000,https://a.example:8443' }).corsOrigins, ['http://[::1]:3000', 'https://a.example:8443'])
  refused({ SERVICE_SEGMENT: '..' }, /SERVICE_SEGMENT must be/)
  refused({ SERVICE_SEGMENT: '.' }, /SERVICE_SEGMENT must be/)
  refused({ METRICS_TOKEN: 'm', METRICS_PORT: '8080' }, /METRICS_PORT must differ from PORT/)
  refused({ METRICS_TOKEN: 'm', METRICS_PORT: '9000', PORT: '9000' }, /METRICS_PORT must differ from PORT/)
  refused({ MQTT_USERNAME: 'u' }, /MQTT_USERNAME is set without MQTT_URL/)
  refused({ MQTT_TOPIC_PREFIX: 'a/b', MQTT_PASSWORD: 'p' }, /MQTT_PASSWORD and MQTT_TOPIC_PREFIX are set without MQTT_URL/)
  t.equal(loadConfig({ METRICS_TOKEN: 'm', METRICS_PORT: '65535' }).metricsPort, 65535)
  t.same(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins, ['https://a.example', 'http://localhost:5173'])
  t.equal(loadConfig({ SERVICE_SEGMENT: 'fds.v1' }).serviceSegment, 'fds.v1')
})
