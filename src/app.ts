import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import sensible from '@fastify/sensible'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import authentication from '../plugins/authentication.js'
import entityRegistry from '../plugins/entity-registry.js'
import eventStore from '../plugins/event-store.js'
import queryRules from '../plugins/query-rules.js'
import specifications from '../plugins/specifications.js'
import type { Config } from './config.js'
import { errorObject, sendError } from './http/replies.js'
import eventSpecificationsRoutes from './routes/event-specifications.js'
import eventsRoutes from './routes/events.js'
import healthRoutes from './routes/health.js'
import { StoreUnavailableError } from './store/event-store.js'
import { StoreContractError } from './store/store-contract.js'

export interface AppOptions {
  config: Config
}

/**
 * The root plugin: shared plugins, then routes, then the error and not-found handlers. The
 * registrations are queued, not awaited, so the handlers below are in place before any route loads.
 */
export default async function app (fastify: FastifyInstance, options: AppOptions): Promise<void> {
  const { config } = options
  fastify.register(sensible)
  fastify.register(authentication, { tokens: config.apiTokens })
  fastify.register(queryRules)
  fastify.register(entityRegistry, { entitiesFile: config.entitiesFile })
  fastify.register(eventStore, { store: config.store })
  fastify.register(specifications, { specificationsFile: config.specificationsFile })

  fastify.register(eventsRoutes)
  fastify.register(eventSpecificationsRoutes)
  fastify.register(healthRoutes)

  // The route's response schema serialises what an error handler sends, so it sends objects.
  fastify.setErrorHandler(function (error: FastifyError, request, reply) {
    if (error.validation !== undefined) return errorObject(reply, 'invalid_parameter')
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error }, 'event store unavailable')
      return errorObject(reply, 'service_unavailable')
    }
    if (error instanceof StoreContractError) {
      request.log.error({ err: error }, 'the event store broke the answer contract')
      return errorObject(reply, 'internal_error')
    }
    const status = error.statusCode ?? 500
    if (status === 404) return errorObject(reply, 'not_found')
    // Other client errors Fastify raises before the rules run (a malformed URL, say) are bad
    // requests to this read-only interface.
    if (status >= 400 && status < 500) {
      request.log.info({ err: error }, 'request refused')
      return errorObject(reply, 'invalid_parameter')
    }
    request.log.error({ err: error }, 'unexpected failure')
    return errorObject(reply, 'internal_error')
  })

  fastify.setNotFoundHandler(function (request, reply) {
    return sendError(reply, 'not_found')
  })
}

export function serverOptions (config: Config): FastifyServerOptions {
  return {
    logger: { level: config.logLevel },
    // Requests are counted in the millions; a log line per request is debug detail.
    logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
    return503OnClosing: true
  }
}

/** A ready-to-use provider for the given configuration (tests and the server both use it). */
export async function buildApp (config: Config, overrides: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const fastify = Fastify({ ...serverOptions(config), ...overrides }).withTypeProvider<TypeBoxTypeProvider>()
  fastify.register(app, { config })
  await fastify.ready()
  return fastify
}
