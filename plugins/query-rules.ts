import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import type { ErrorCodeName } from '../schemas/error.js'
import { sendError } from '../src/http/replies.js'
import { readParameterNames } from '../src/http/query-parameter-names.js'
import { ceilMs, isBefore, parseRfc3339 } from '../src/time/rfc3339.js'

export interface DateRange {
  /** The window in whole milliseconds: startMs <= date_time < endMs. */
  startMs: number
  endMs: number
}

export interface QueryRules {
  /** At most one of these parameters may be given (400 invalid_parameter_combination). */
  exclusive?: readonly string[]
  /** Names of the start and end date parameters, checked after the schema (403s). */
  dateRange?: { start: string, end: string }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    queryRules?: QueryRules
  }
  interface FastifyRequest {
    /** Set by the date-range rule on routes that declare one. */
    dateRange: DateRange
  }
}

interface QuerystringSchema {
  properties?: Record<string, unknown>
  required?: readonly string[]
}

/**
 * The interface's query rules, in its order, for every route that declares `config.queryRules`:
 * the names the route's querystring schema lists are the only ones known (400 invalid_parameter),
 * none may repeat (400 duplicate_parameter), its required ones must be there (400
 * missing_parameter), and at most one exclusive one may be given (400
 * invalid_parameter_combination). Then the schema checks the values (400 invalid_parameter), and
 * last the dates (403 invalid_start_date / invalid_end_date).
 */
export default fp(async function queryRules (fastify) {
  fastify.decorateRequest('dateRange', null as unknown as DateRange)

  fastify.addHook('onRoute', (route: RouteOptions) => {
    const rules = route.config?.queryRules
    if (rules === undefined) return
    const schema = (route.schema?.querystring ?? {}) as QuerystringSchema
    const known = new Set(Object.keys(schema.properties ?? {}))
    const required = schema.required ?? []
    const exclusive = rules.exclusive ?? []

    // Callback-style hooks (they run on every request): reply and stop, or call done.
    const checkNames = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const violation = nameRuleViolation(readParameterNames(request.url), known, required, exclusive)
      if (violation === undefined) done()
      else sendError(reply, violation)
    }
    route.preValidation = [checkNames, ...toArray(route.preValidation)]

    const dates = rules.dateRange
    if (dates === undefined) return
    const checkDates = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const query = request.query as Record<string, string | undefined>
      const range = dateRangeOf(query[dates.start], query[dates.end], Date.now())
      if (typeof range === 'string') {
        sendError(reply, range)
        return
      }
      request.dateRange = range
      done()
    }
    route.preHandler = [...toArray(route.preHandler), checkDates]
  })
}, { name: 'query-rules' })

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
  const seen = new Set<string | undefined>(names)
  if (seen.size !== names.length) return 'duplicate_parameter'
  if (required.length > 0 && (names.length === 0 || required.some((name) => !seen.has(name)))) return 'missing_parameter'
  if (exclusive.filter((name) => seen.has(name)).length > 1) return 'invalid_parameter_combination'
  return undefined
}

/** The window of a start and an optional end date at `now`, or the 403 that refuses them. */
export function dateRangeOf (startText: string | undefined, endText: string | undefined, now: number): DateRange | ErrorCodeName {
  const start = parseRfc3339(startText ?? '')
  if (start === undefined || start.epochMs >= now) return 'invalid_start_date'
  if (endText === undefined) return { startMs: ceilMs(start), endMs: now }
  const end = parseRfc3339(endText)
  if (end === undefined || end.epochMs >= now || !isBefore(start, end)) return 'invalid_end_date'
  return { startMs: ceilMs(start), endMs: ceilMs(end) }
}

function toArray<T> (value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}
