import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'

export interface RateLimitsOptions {
  /** RATE_LIMIT; undefined: no limit. */
  limit: { max: number, windowMs: number } | undefined
}

/**
 * RATE_LIMIT per token (`@fastify/rate-limit`): beyond it, 429 too_many_requests with Retry-After
 * and the IETF draft's RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset headers (on every
 * counted answer). Counted by the token's name or digest, in a route's onRequest hook: after the
 * token's check (the application's onRequest hook) and before the route's checks (an ingest's
 * type and size, the parameters' names and values), so 401 and 403, then 429, then the rest;
 * the probes and other public routes are not counted.
 * The counts are this process's own (an in-memory LRU): README, "Rate limits", says how several
 * instances share one.
 */
export default fp<RateLimitsOptions>(async function rateLimits (fastify, options) {
  const { limit } = options
  if (limit === undefined) return
  await fastify.register(rateLimit, {
    global: true,
    max: limit.max,
    timeWindow: limit.windowMs,
    hook: 'onRequest',
    enableDraftSpec: true,
    keyGenerator: (request) => request.principal?.key ?? request.ip,
    allowList: (request) => request.routeOptions.config.public === true,
    errorResponseBuilder: (_request, context) => ({ statusCode: 429, message: 'too_many_requests', retryAfterMs: context.ttl })
  })
}, { name: 'rate-limits', dependencies: ['authentication'], fastify: '5.x' })
