import fp from 'fastify-plugin'
import { Registry } from 'prom-client'
import { bearerTokenOf, tokenDigest } from '../src/http/bearer-token.js'
import { sendError } from '../src/http/replies.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where plugins register their Prometheus metrics (served at GET /metrics with METRICS_TOKEN). */
    metrics: Registry
  }
}

export interface MetricsOptions {
  /** METRICS_TOKEN; undefined: the registry is kept, the endpoint is not served. */
  token: string | undefined
}

/**
 * The provider's Prometheus metrics (`prom-client`), in text format at `GET /metrics`, readable
 * with METRICS_TOKEN only (an operator's token, not a consumer's: any other is 401). Per process:
 * with WORKERS > 1 each answer is one worker's.
 */
export default fp<MetricsOptions>(async function metrics (fastify, options) {
  const registry = new Registry()
  fastify.decorate('metrics', registry)
  const { token } = options
  if (token === undefined) return
  const expected = tokenDigest(token)
  fastify.get('/metrics', { config: { public: true } }, async (request, reply) => {
    const offered = bearerTokenOf(request.raw)
    if (offered === undefined || tokenDigest(offered) !== expected) return sendError(reply, 'unauthorized_request')
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}, { name: 'metrics', fastify: '5.x' })
