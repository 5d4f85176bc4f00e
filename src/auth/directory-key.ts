import type { FastifyRequest } from 'fastify'
import { bearerTokenOf, tokenKey } from '../http/bearer-token.js'

/**
 * The key of the token directory's entry a request was let in as (TokenDirectory.byKey), or
 * undefined for a JWT, whose rights are its own claims, verified once. A route that waits
 * (a body on its way, a store asked) looks the key up again: TOKENS_FILE may have been reloaded
 * meanwhile, revoking the token or changing its scope or rights.
 */
export function directoryKeyOf (request: FastifyRequest): string | undefined {
  const token = bearerTokenOf(request.raw)
  return request.principal.jwt === true || token === undefined ? undefined : tokenKey(token)
}
