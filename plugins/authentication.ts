import fp from 'fastify-plugin'
import { createTokenCheck } from '../src/http/bearer-token.js'
import { sendError } from '../src/http/replies.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a token (health probes). */
    public?: boolean
  }
}

export interface AuthenticationOptions {
  tokens: readonly string[]
}

/**
 * Every request needs `Authorization: Bearer <token>` with a configured token, before any other
 * check (so unknown paths answer 401 too, and reveal nothing to a caller without a token).
 */
export default fp<AuthenticationOptions>(async function authentication (fastify, options) {
  const isAuthorized = createTokenCheck(options.tokens)

  // Callback-style hooks: this runs on every request, and a promise per request is measurable.
  fastify.addHook('onRequest', function checkToken (request, reply, done) {
    if (request.routeOptions.config.public === true || isAuthorized(request.raw)) return done()
    sendError(reply, 'unauthorized_request')
  })
}, { name: 'authentication', fastify: '5.x' })
