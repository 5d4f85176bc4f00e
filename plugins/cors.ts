import fp from 'fastify-plugin'
import cors from '@fastify/cors'

export interface CorsOptions {
  /** CORS_ORIGINS; undefined: no CORS headers at all. */
  origins: '*' | string[] | undefined
}

/**
 * CORS for browser clients of the listed origins (`@fastify/cors`). Preflight requests carry no
 * token (browsers never send one), so they are answered without one; the real request that
 * follows needs its token as always.
 */
export default fp<CorsOptions>(async function corsHeaders (fastify, options) {
  const { origins } = options
  if (origins === undefined) return
  fastify.addHook('onRoute', (route) => {
    // @fastify/cors's preflight route: answered before (and without) the token check.
    if (route.method === 'OPTIONS') route.config = { ...route.config, public: true }
  })
  await fastify.register(cors, {
    origin: origins === '*' ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID', 'If-None-Match'],
    exposedHeaders: ['ETag', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Error-Message'],
    maxAge: 600,
    // @fastify/cors sends `Content-Length: 0` with its answer (Safari waits for a body without
    // it), which RFC 9110 forbids on a 204: a 200 with an empty body is the same "ok" to a browser.
    optionsSuccessStatus: 200,
    // An OPTIONS request that is not a preflight (no Origin or Access-Control-Request-Method) gets
    // the preflight's answer without grants, instead of @fastify/cors's plain-text 400, which is no
    // error object (and no error: it asks nothing).
    strictPreflight: false
  })
}, { name: 'cors', fastify: '5.x' })
