import fp from 'fastify-plugin'
import { createTokenLookup, type GrantedToken } from '../src/http/bearer-token.js'
import { sendError } from '../src/http/replies.js'

/** What a route needs of a token: the consumer interface reads, the ingest posts. */
export type RouteAccess = 'read' | 'ingest'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a token (health probes). */
    public?: boolean
    /** The right a token needs here; `read` when not said. */
    access?: RouteAccess
  }
}

export interface AuthenticationOptions {
  tokens: readonly GrantedToken[]
}

/**
 * Every request needs `Authorization: Bearer <token>` with a configured token, before any other
 * check (so unknown paths answer 401 too, and reveal nothing to a caller without a token). A
 * known token without the route's right (an ingest token reading events, a consumer token
 * posting them) is 403 forbidden; on a path no route serves, any known token goes on to the 404.
 */
export default fp<AuthenticationOptions>(async function authentication (fastify, options) {
  const rightsOf = createTokenLookup(options.tokens)

  // Callback-style hooks: this runs on every request, and a promise per request is measurable.
  fastify.addHook('onRequest', function checkToken (request, reply, done) {
    const config = request.routeOptions.config
    if (config.public === true) return done()
    const rights = rightsOf(request.raw)
    if (rights === undefined) return sendError(reply, 'unauthorized_request')
    if (request.is404 || rights[config.access ?? 'read']) return done()
    sendError(reply, 'forbidden')
  })
}, { name: 'authentication', fastify: '5.x' })
