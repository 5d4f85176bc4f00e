import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { Counter, Registry } from 'prom-client'
import { CheapHistogram, type HistogramSeries } from '../src/http/cheap-histogram.js'
import { bearerTokenOf, tokenDigest } from '../src/http/bearer-token.js'
import { errorBody, JSON_CONTENT_TYPE, sendError } from '../src/http/replies.js'
import { ConfigError } from '../src/config-error.js'

/** The provider's own figures, for the routes and plugins that count them. */
export interface ProviderMetrics {
  readonly registry: Registry
  /** Events written into answers (events endpoint). */
  readonly eventsServed: Counter
  /** Seconds from a query's start to its last event, by store kind and outcome. */
  readonly storeQuerySeconds: CheapHistogram<'store' | 'outcome'>
  /** Store failures (unavailable, a refused query, a broken contract), by kind. */
  readonly storeFailures: Counter<'kind'>
  /** Requests that waited for a later turn of the event loop (src/http/turn-budget.ts). */
  readonly requestsDeferred: Counter
  /** Counts a request no route serves, as it is answered. */
  countUnrouted (request: FastifyRequest, reply: FastifyReply): void
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Where plugins register their Prometheus metrics (served at GET /metrics with METRICS_TOKEN). */
    metrics: Registry
    providerMetrics: ProviderMetrics
  }
}

export interface MetricsOptions {
  /** METRICS_TOKEN; undefined: the registry is kept, the endpoint is not served. */
  token: string | undefined
  /** METRICS_PORT: the same endpoint on a port of its own as well (the main one keeps it too). */
  port?: number | undefined
  host?: string
}

/**
 * The provider's Prometheus metrics (`prom-client`), in text format at `GET /metrics`, readable
 * with METRICS_TOKEN only (an operator's token, not a consumer's: any other is 401; unset, the
 * endpoint is not served), and on METRICS_PORT too when set. Per process: with WORKERS > 1 each
 * answer is one worker's. Requests by route, method and status with a latency histogram; store
 * query time and failures; events served; the live side adds ingest counts, streams and the MQTT
 * backlog (plugins/live-events.ts, src/routes/ingest.ts).
 */
export default fp<MetricsOptions>(async function metrics (fastify, options) {
  const registry = new Registry()
  fastify.decorate('metrics', registry)
  const requestSeconds = new CheapHistogram({
    name: 'http_request_duration_seconds',
    help: 'Requests by route (its pattern), method and status, and how long they took',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
  })
  registry.registerMetric(requestSeconds as never)
  const storeQuerySeconds = new CheapHistogram({
    name: 'store_query_duration_seconds',
    help: 'From the start of a query to its last event, by store and outcome (ok, failed)',
    labelNames: ['store', 'outcome'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30]
  })
  registry.registerMetric(storeQuerySeconds as never)
  fastify.decorate('providerMetrics', {
    registry,
    eventsServed: new Counter({ name: 'events_served_total', help: 'Events written into events answers', registers: [registry] }),
    storeQuerySeconds,
    countUnrouted: (request: FastifyRequest, reply: FastifyReply) => countUnrouted(request, reply),
    storeFailures: new Counter({ name: 'store_failures_total', help: 'Store failures by kind: unavailable, query_refused, contract_broken', labelNames: ['kind'] as const, registers: [registry] }),
    requestsDeferred: new Counter({ name: 'requests_deferred_total', help: 'Events and stream requests that waited for a later turn of the event loop, the requests read with them having spent its budget (TURN_BUDGET_MS, 10 ms)', registers: [registry] })
  })
  // One observation per answer through a child kept per route, method and status (prom-client
  // hashes a labels object on every observe). Each route gets its own hook, knowing its pattern
  // (reading `request.routeOptions` builds a new object each time); requests no route serves are
  // counted by one shared hook. Callback style: this runs on every request.
  const counter = (route: string, method: string) => {
    const byStatus = new Map<number, HistogramSeries>()
    return (reply: { statusCode: number, elapsedTime: number }) => {
      let series = byStatus.get(reply.statusCode)
      if (series === undefined) byStatus.set(reply.statusCode, series = requestSeconds.series(route, method, String(reply.statusCode)))
      requestSeconds.observe(series, reply.elapsedTime / 1000)
    }
  }
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const counters = new Map(methods.map((method) => [method, counter(route.url, method)]))
    const countRequest = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      counters.get(request.method)?.(reply)
      done()
    }
    route.onResponse = route.onResponse === undefined ? [countRequest] : [...(Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]), countRequest]
  })
  // Requests no route serves are counted where they are answered 404 (src/app.ts), not by a
  // hook on every request.
  const unrouted = new Map<string, (reply: FastifyReply) => void>()
  const countUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    let count = unrouted.get(request.method)
    if (count === undefined) unrouted.set(request.method, count = counter('unrouted', request.method))
    count(reply)
  }

  const { token } = options
  if (token === undefined) return
  const expected = tokenDigest(token)
  const allowed = (offered: string | undefined) => offered !== undefined && tokenDigest(offered) === expected
  fastify.get('/metrics', { config: { public: true } }, async (request, reply) => {
    if (!allowed(bearerTokenOf(request.raw))) return sendError(reply, 'unauthorized_request')
    return reply.type(registry.contentType).send(await registry.metrics())
  })

  if (options.port === undefined) return
  const server: Server = createServer((request, response) => {
    if (request.url !== '/metrics' || !allowed(bearerTokenOf(request))) {
      const code = request.url !== '/metrics' ? 'not_found' : 'unauthorized_request'
      response.writeHead(code === 'not_found' ? 404 : 401, { 'content-type': JSON_CONTENT_TYPE, ...(code === 'unauthorized_request' ? { 'www-authenticate': 'Bearer' } : {}) }).end(errorBody(code))
      return
    }
    registry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': registry.contentType }).end(text)
    }, () => response.writeHead(500).end())
  })
  const host = options.host ?? '0.0.0.0'
  server.listen(options.port, host)
  try {
    await once(server, 'listening')
  } catch (error) {
    // Named here (server.ts names a failure on PORT), with HOST: a host that does not resolve fails here first.
    throw new ConfigError(`cannot listen on HOST ${host}, METRICS_PORT ${options.port}: ${(error as Error).message}`)
  }
  fastify.addHook('onClose', (_instance, done) => { server.close(() => done()) })
  fastify.log.info({ port: options.port }, 'metrics listening on their own port too')
}, { name: 'metrics', fastify: '5.x' })
