import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import type { ErrorCodeName } from '../schemas/error.js'
import { sendError } from '../src/http/replies.js'
import { readParameterNames } from '../src/http/query-parameter-names.js'

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

/**
 * The interface's name rules, in its order, for every route that declares `config.queryRules`:
 * the names the route's querystring schema lists are the only ones known (400
 * invalid_parameter), none may repeat (400 duplicate_parameter), its required ones must be there
 * (400 missing_parameter), and at most one exclusive one may be given (400
 * invalid_parameter_combination). Then the schema checks the values (400 invalid_parameter); the
 * dates (403) are the handler's, last.
 */
export default fp(async function queryRules (fastify) {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const rules = route.config?.queryRules
    if (rules === undefined) return
    const schema = (route.schema?.querystring ?? {}) as QuerystringSchema
    const known = new Set(Object.keys(schema.properties ?? {}))
    const required = schema.required ?? []
    const exclusive = rules.exclusive ?? []

    // A callback-style hook (it runs on every request): reply and stop, or call done.
    const checkNames = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const violation = nameRuleViolation(readParameterNames(request.url), known, required, exclusive)
      if (violation === undefined) done()
      else sendError(reply, violation)
    }
    route.preValidation = [checkNames, ...toArray(route.preValidation)]
  })
}, { name: 'query-rules', fastify: '5.x' })

/** The name rules in the interface's order; the first broken one, if any. */
export function nameRuleViolation (
  names: ReadonlyArray<string | undefined>,
  known: ReadonlySet<string>,
  required: readonly string[],
  exclusive: readonly string[]
): ErrorCodeName | undefined {
  for (const name of names) {
    if (name === undefined || !known.has(name)) return 'invalid_parameter'
  }
  // A request names a handful of parameters: scans of the list, without a set or an array per request.
  for (let i = 1; i < names.length; i++) {
    if (names.lastIndexOf(names[i], i - 1) !== -1) return 'duplicate_parameter'
  }
  for (const name of required) {
    if (!names.includes(name)) return 'missing_parameter'
  }
  let given = 0
  for (const name of exclusive) {
    if (names.includes(name) && ++given > 1) return 'invalid_parameter_combination'
  }
  return undefined
}

function toArray<T> (value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}
