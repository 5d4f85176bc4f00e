import { hash, timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
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

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/**
 * Comparing fixed-length digests keeps the comparison's time independent of the token's content
 * and length. One-shot: a createHash() object per request is a native object whose weak handle
 * every young-generation GC must process, and at tens of thousands of requests a second those
 * callbacks were half of each GC pause.
 */
function digest (token: string): Buffer {
  return hash('sha256', token, 'buffer')
}

/**
 * Every request needs `Authorization: Bearer <token>` with a configured token, before any other
 * check (so unknown paths answer 401 too, and reveal nothing to a caller without a token).
 */
export default fp<AuthenticationOptions>(async function authentication (fastify, options) {
  if (options.tokens.length === 0) throw new Error('authentication needs at least one token')
  const accepted = options.tokens.map(digest)

  // Callback-style hooks: this runs on every request, and a promise per request is measurable.
  fastify.addHook('onRequest', function checkToken (request, reply, done) {
    if (request.routeOptions.config.public === true) return done()
    const header = request.headers.authorization
    const match = header === undefined ? null : BEARER.exec(header)
    if (match !== null) {
      const offered = digest(match[1]!)
      let valid = false
      for (const token of accepted) valid = timingSafeEqual(offered, token) || valid
      if (valid) return done()
    }
    sendError(reply, 'unauthorized_request')
  })
}, { name: 'authentication', fastify: '5.x' })
