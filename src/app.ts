import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import sensible from '@fastify/sensible'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import authentication from '../plugins/authentication.js'
import batchedWrites from '../plugins/batched-writes.js'
import headRequests from '../plugins/head-requests.js'
import closingConnections from '../plugins/closing-connections.js'
import loadLimits from '../plugins/load-limits.js'
import metrics from '../plugins/metrics.js'
import openapi from '../plugins/openapi.js'
import corsHeaders from '../plugins/cors.js'
import rateLimits from '../plugins/rate-limits.js'
import entityRegistry from '../plugins/entity-registry.js'
import eventStore from '../plugins/event-store.js'
import liveEvents from '../plugins/live-events.js'
import queryRules from '../plugins/query-rules.js'
import specifications from '../plugins/specifications.js'
import tlsCertificates from '../plugins/tls-certificates.js'
import type { Config } from './config.js'
import { TokenDirectory } from './auth/token-directory.js'
import { bearerTokenOf } from './http/bearer-token.js'
import { lazyRequestLogger } from './http/lazy-request-logger.js'
import { answerClientError } from './http/client-errors.js'
import { keepHalfOpenConnections } from './http/half-open.js'
import { errorObject, sendError } from './http/replies.js'
import eventSpecificationsRoutes from './routes/event-specifications.js'
import eventsRoutes from './routes/events.js'
import healthRoutes from './routes/health.js'
import eventStreamRoutes from './routes/event-stream.js'
import ingestRoutes from './routes/ingest.js'
import { StoreQueryError, StoreUnavailableError } from './store/event-store.js'
import { StoreContractError } from './store/store-contract.js'

export interface AppOptions {
  config: Config
  tokens: TokenDirectory
}

/**
 * The root plugin: shared plugins, then routes, then the error and not-found handlers. The
 * registrations are queued, not awaited, so the handlers below are in place before any route loads.
 */
export default async function app (fastify: FastifyInstance, options: AppOptions): Promise<void> {
  const { config, tokens } = options
  fastify.register(tlsCertificates, { tls: config.tls })
  fastify.register(loadLimits, { ...config.limits })
  fastify.register(batchedWrites)
  fastify.register(closingConnections)
  fastify.register(headRequests)
  fastify.register(sensible)
  fastify.register(openapi, { serviceSegment: config.serviceSegment })
  fastify.register(metrics, { token: config.metricsToken, port: config.metricsPort, host: config.host })
  fastify.register(corsHeaders, { origins: config.corsOrigins })
  fastify.register(entityRegistry, { entitiesFile: config.entitiesFile })
  fastify.register(authentication, { tokens, tokensFile: config.tokensFile, jwt: config.jwt })
  fastify.register(rateLimits, { limit: config.rateLimit })
  // After the rate limit: its hook is added to each route before the name rules' (plugins/query-rules.ts).
  fastify.register(queryRules)
  fastify.register(eventStore, { store: config.store })
  fastify.register(specifications, { specificationsFile: config.specificationsFile })
  fastify.register(liveEvents, { stream: config.stream, mqtt: config.mqtt })

  // The interface's paths begin with SERVICE_SEGMENT (`/svc/v2/events` by default).
  const prefix = `/${config.serviceSegment}`
  fastify.register(eventsRoutes, { prefix })
  fastify.register(eventSpecificationsRoutes, { prefix })
  fastify.register(eventStreamRoutes, { prefix, retryAfterSeconds: config.limits.retryAfterSeconds })
  fastify.register(ingestRoutes, { maxBytes: config.ingestMaxBytes, maxLines: config.ingestMaxLines, maxBytesInFlight: config.ingestMaxBytesInFlight, retryAfterSeconds: config.limits.retryAfterSeconds })
  fastify.register(healthRoutes)

  // The route's response schema serialises what an error handler sends, so it sends objects.
  const answerError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (error.validation !== undefined) return errorObject(reply, 'invalid_parameter')
    if (error instanceof StoreUnavailableError) {
      fastify.providerMetrics.storeFailures.inc({ kind: 'unavailable' })
      request.log.warn({ err: error }, 'event store unavailable')
      reply.header('retry-after', String(config.limits.retryAfterSeconds))
      return errorObject(reply, 'service_unavailable')
    }
    if (error instanceof StoreContractError || error instanceof StoreQueryError) {
      fastify.providerMetrics.storeFailures.inc({ kind: error instanceof StoreQueryError ? 'query_refused' : 'contract_broken' })
      request.log.error({ err: error }, 'a defect between the provider and its store')
      return errorObject(reply, 'internal_error')
    }
    const status = error.statusCode ?? 500
    // A path or method no route serves stays 404 whatever else is wrong with the request (a
    // body Fastify could not parse, say): the token was checked before.
    if (status === 404 || request.is404) return errorObject(reply, 'not_found')
    if (status === 429) return errorObject(reply, 'too_many_requests')
    // The ingest's body: over INGEST_MAX_BYTES, or of a type it does not take.
    if (status === 413) return errorObject(reply, 'payload_too_large')
    if (status === 415) return errorObject(reply, 'unsupported_media_type')
    // Other client errors Fastify raises before the rules run (a malformed URL, say) are bad
    // requests to this read-only interface.
    if (status >= 400 && status < 500) {
      request.log.info({ err: error }, 'request refused')
      return errorObject(reply, 'invalid_parameter')
    }
    request.log.error({ err: error }, 'unexpected failure')
    return errorObject(reply, 'internal_error')
  }
  // Neither handler returns the reply: to Fastify a returned reply is a thenable, and it would
  // wait for the answer to finish (listeners on the response, another turn) for nothing
  // (plugins/authentication.ts measures what that cost a 401).
  fastify.setErrorHandler(function (error: FastifyError, request, reply) {
    answerError(error, request, reply)
  })

  fastify.setNotFoundHandler(function (request, reply) {
    sendError(reply, 'not_found')
    fastify.providerMetrics.countUnrouted(request, reply)
  })
}

export function serverOptions (config: Config): FastifyServerOptions {
  const { limits } = config
  const httpOptions = {
    // Node checks the two timeouts below on this interval (30 s by default, so a client
    // dribbling its headers was cut only after 65 s).
    connectionsCheckingInterval: 1000,
    headersTimeout: limits.requestTimeoutMs,
    // A request without Host is answered like any other (the token first), not with Node's empty 400.
    requireHostHeader: false
  }
  return {
    logger: { level: config.logLevel },
    // Requests are counted in the millions; a log line per request is debug detail.
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
    // A request's child logger is made when it first writes a line, not for every request.
    childLoggerFactory: lazyRequestLogger,
    // While closing, plugins/load-limits.ts answers new requests 503 with the error object and Retry-After.
    return503OnClosing: false,
    // Loading a large memory store takes as long as it takes: no framework timeout bounds it.
    pluginTimeout: 0,
    // Timeouts Node leaves off or long, set on purpose (README, "Limits and timeouts").
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    // Passed to http.createServer, or with TLS to https.createServer, which takes the same
    // options beside its own (Fastify's types do not list `http`, its server factory reads it).
    // A TLS socket ends itself at its client's FIN unless allowed half-open (http.Server's
    // sockets are, by Node): the answers owed would be lost (src/http/half-open.ts).
    ...(config.tls === undefined ? { http: httpOptions } : { https: { ...httpOptions, cert: config.tls.cert, key: config.tls.key, handshakeTimeout: limits.requestTimeoutMs, allowHalfOpen: true } })
  }
}

/** A ready-to-use provider for the given configuration (tests and the server both use it). */
export async function buildApp (config: Config, overrides: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const tokens = new TokenDirectory(config.apiTokens, config.ingestTokens)
  const fastify: FastifyInstance = Fastify({
    ...serverOptions(config),
    // A URL Fastify cannot decode (`/%`): no route can match it; the token still comes first
    // (a JWT is not verified for it: 401).
    frameworkErrors: (error, request, reply) => {
      const token = bearerTokenOf(request.raw)
      if (token === undefined || tokens.lookup(token) === undefined) return sendError(reply, 'unauthorized_request')
      request.log.info({ err: error }, 'request refused')
      return sendError(reply, 'not_found')
    },
    clientErrorHandler: (error, socket) => {
      const code = answerClientError(error, socket)
      // Not the error itself: Node's parser errors carry the raw bytes read (`rawPacket`), a
      // token among them, and logs never hold a token.
      if (code !== undefined) fastify.log.debug({ err: { type: error.name, code: (error as NodeJS.ErrnoException).code, message: error.message }, answered: code }, 'a request that could not be read')
    },
    ...overrides
  }).withTypeProvider<TypeBoxTypeProvider>()
  fastify.server.maxConnections = config.limits.maxConnections
  // Half-closed connections get the answers they are owed (src/http/half-open.ts).
  keepHalfOpenConnections(fastify.server)
  // An Expect other than 100-continue: Node would answer an empty 417. HTTP lets a server
  // ignore an expectation it does not know, so the request is served as any other.
  fastify.server.on('checkExpectation', (request, response) => { fastify.routing(request, response) })
  fastify.register(app, { config, tokens })
  await fastify.ready()
  return fastify
}
