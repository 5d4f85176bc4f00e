import type { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ErrorObject } from '../../schemas/error.js'
import { EventsQuerystring, EventsResponse, exclusiveEventFilters } from '../../schemas/events.js'
import { errorResponses } from '../../schemas/responses.js'
import { giveBackLentBuffer } from '../events/answer-buffers.js'
import { buildEventQuery } from '../events/build-event-query.js'
import { deflatedBlocks } from '../events/deflated-blocks.js'
import { GzippedEventsStream } from '../events/gzipped-events-stream.js'
import { renderEventsBody } from '../events/render-events-body.js'
import { preferredCoding, type ContentCoding } from '../http/accept-encoding.js'
import { COMPRESS_FROM_BYTES, compressedStream } from '../http/compressed-stream.js'
import { sendError, sendJson } from '../http/replies.js'
import { turnBudgetSpent, waitForTurnBudget } from '../http/turn-budget.js'
import { dateRangeOf } from '../time/date-range.js'

const eventsRoutes: FastifyPluginAsyncTypebox = async function (fastify) {
  const { eventsServed, storeQuerySeconds, requestsDeferred } = fastify.providerMetrics
  const answered = storeQuerySeconds.series(fastify.events.kind, 'ok')
  const failed = storeQuerySeconds.series(fastify.events.kind, 'failed')
  fastify.get('/v2/events', {
    schema: {
      querystring: EventsQuerystring,
      response: { 200: EventsResponse, ...errorResponses, 403: ErrorObject, 503: ErrorObject }
    },
    config: { queryRules: { exclusive: exclusiveEventFilters } }
  }, function (request, reply) {
    // Requests read once the turn's budget is spent wait in line for a later turn (turn-budget.ts).
    if (!turnBudgetSpent()) return answer(request, reply, request.query)
    requestsDeferred.inc()
    return waitForTurnBudget().then(async () => {
      // Its client left meanwhile: nothing to answer.
      if (request.raw.socket?.destroyed === true) return reply.hijack()
      await answer(request, reply, request.query)
      // The reply, not undefined: Fastify then waits for it to finish, where it would send again
      // while a streamed answer has yet to write its first byte (held-answers.ts).
      return reply
    })
  })

  /** Sends the answer: at once (undefined), or once the store has begun it (its promise ends with the answer). */
  function answer (request: FastifyRequest, reply: FastifyReply, parameters: EventsQuerystring): Promise<void> | undefined {
    // The dates are the last check (403), after the name rules and the schema's values (400s).
    const range = dateRangeOf(parameters.start_date, parameters.end_date, Date.now())
    if (typeof range === 'string') {
      sendError(reply, range)
      return
    }
    const { query, errors } = buildEventQuery(parameters, range, fastify.entityRegistry, request.principal.scope)
    const started = performance.now()
    const accepted = request.headers['accept-encoding']
    const coding = accepted === undefined ? undefined : preferredCoding(accepted)
    const body = renderEventsBody(fastify.events.query(query), errors, {
      gzipBlocks: coding === 'gzip' ? deflatedBlocks : undefined,
      onEnd: (events) => {
        eventsServed.inc(events)
        storeQuerySeconds.observe(answered, (performance.now() - started) / 1000)
      },
      // Logged whatever LOG_LEVEL hides of the request lines: the client got a 200 whose body
      // stops without its end, and the operator must learn why.
      onCut: (error, sent) => {
        storeQuerySeconds.observe(failed, (performance.now() - started) / 1000)
        request.log.error({ err: error, url: request.url, eventsSent: sent.events, bytesSent: sent.bytes }, 'events answer cut: the store failed after the answer had begun')
      }
    })
    // A memory-store answer is ready now: no promise for it (the handler is not async).
    // Awaiting the reply waits for it to finish: a promise ending before would have Fastify send again.
    if (body instanceof Promise) return body.then(async (answer) => { await send(reply, answer, coding) })
    send(reply, body, coding)
  }
}

/**
 * Compressed (or not) as Accept-Encoding asks: caches must keep the two apart. A request that asks
 * for none (most machine clients) costs one header lookup.
 */
function send (reply: FastifyReply, body: Buffer | Readable, coding: ContentCoding | undefined): FastifyReply {
  // A whole answer's memory is reused once it is written out (a response that never finishes
  // keeps it, to be collected).
  if (Buffer.isBuffer(body)) reply.raw.on('finish', () => { giveBackLentBuffer(body) })
  // Added to, not set: @fastify/cors may have named Origin already.
  const vary = reply.getHeader('vary')
  reply.header('vary', vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`)
  if (body instanceof GzippedEventsStream) return sendJson(reply.header('content-encoding', 'gzip'), body)
  if (coding === undefined || (Buffer.isBuffer(body) && body.length < COMPRESS_FROM_BYTES)) return sendJson(reply, body)
  reply.header('content-encoding', coding)
  return sendJson(reply, compressedStream(body, coding))
}

export default eventsRoutes
