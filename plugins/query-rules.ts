import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RequestPayload, RouteOptions } from 'fastify'
import { sendError } from '../src/http/replies.js'
import { compileNameRules } from '../src/http/query-name-rules.js'
import { withHookLast } from '../src/http/route-hooks.js'

export interface QueryRules {
  /** At most one of these parameters may be given (400 invalid_parameter_combination). */
  exclusive?: readonly string[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    queryRules?: QueryRules
  }
}

interface QuerystringSchema {
  properties?: Record<string, unknown>
  required?: readonly string[]
}

/** Where the name rules run: after the rate limit's hook when there is one (401, then 429, then the parameter checks). */
export interface QueryRulesOptions {
  /** RATE_LIMIT is set: @fastify/rate-limit counts requests in its preParsing hook, which the rules follow. */
  afterRateLimit: boolean
}

/**
 * The interface's name rules, in its order, for every route that declares `config.queryRules`:
 * the names the route's querystring schema lists are the only ones known (400
 * invalid_parameter), none may repeat (400 duplicate_parameter), its required ones must be there
 * (400 missing_parameter), and at most one exclusive one may be given (400
 * invalid_parameter_combination): src/http/query-name-rules.ts. Then the schema checks the values
 * (400 invalid_parameter); the dates (403) are the handler's, last.
 *
 * They run as the route's last hook of a phase the request goes through anyway: onRequest, after
 * the token's hook; or preParsing, after the rate limit's, when there is one (registered after
 * the rate limit, which Fastify holds it to: its onRoute hook must come after the one that adds
 * the rate limit's hook to each route). They were a preValidation hook of their own, a phase
 * the interface's routes had no other hook in, reading the names into strings for a Set: here,
 * compiled, a small request takes 0.23 µs less of its 20 µs of CPU (BENCHMARKS.md, "What
 * profiling found").
 */
export default fp<QueryRulesOptions>(async function queryRules (fastify, options) {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const rules = route.config?.queryRules
    if (rules === undefined) return
    const schema = (route.schema?.querystring ?? {}) as QuerystringSchema
    const violation = compileNameRules({ known: Object.keys(schema.properties ?? {}), required: schema.required ?? [], exclusive: rules.exclusive ?? [] })
    // Callback-style hooks (they run on every request): reply and stop, or call done.
    if (options.afterRateLimit) {
      const checkNames = (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: null, payload: RequestPayload) => void) => {
        const broken = violation(request.url)
        if (broken === undefined) done(null, payload)
        else sendError(reply, broken)
      }
      route.preParsing = withHookLast(route.preParsing, checkNames)
    } else {
      const checkNames = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
        const broken = violation(request.url)
        if (broken === undefined) done()
        else sendError(reply, broken)
      }
      route.onRequest = withHookLast(route.onRequest, checkNames)
    }
  })
}, { name: 'query-rules', dependencies: ['rate-limits'], fastify: '5.x' })
