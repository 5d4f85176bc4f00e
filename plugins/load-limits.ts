import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { kTurns, type ConnectionTurns, type TurnSocket } from '../src/http/connection-turns.js'
import { writeAtOnce } from '../src/http/held-answers.js'
import { sendError } from '../src/http/replies.js'

export interface LoadLimitsOptions {
  /** Requests whose handlers run at once in this process; beyond: 503. */
  maxRequestsInFlight: number
  /** Requests one connection may have waiting behind its current one (HTTP pipelining); beyond: 503. */
  maxPipelinedRequests: number
  /** Event-loop delay above which every request is refused with 503 until it falls again. */
  maxEventLoopDelayMs: number
  /** What Retry-After says on a 503. */
  retryAfterSeconds: number
}

/** After start-up, the event loop's delay is judged from this long on (under-pressure samples every second). */
const START_UP_GRACE_MS = 3000

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A long-lived answer (the event stream): bounded by its own limit, not counted in flight. */
    stream?: boolean
  }
}

/**
 * Bounds the work one client, and all of them, can put on the provider, refusing early and
 * cheaply (503 service_unavailable with Retry-After) instead of collapsing:
 *
 * - One request at a time per connection. HTTP/1.1 lets a client pipeline requests without
 *   reading the answers; Node parses them all and would run every handler at once, each building
 *   an answer that waits unsent behind the earlier ones (ten connections of 500 pipelined
 *   year-long requests took the provider from 655 MB to 3.5 GB). Here a pipelined request waits
 *   until the answer before it is finished, and beyond `maxPipelinedRequests` waiting it is
 *   answered 503 at once; those small answers queue in Node's outgoing buffer, and once it is
 *   full Node stops reading the connection, so a client that never reads costs a bounded amount.
 * - At most `maxRequestsInFlight` requests being handled in the process.
 * - @fastify/under-pressure: 503 while the event loop lags more than `maxEventLoopDelayMs`.
 * - While the provider closes, a request that arrives is answered 503 (Fastify's own answer
 *   then, `return503OnClosing`, is not the interface's error object and has no Retry-After);
 *   one that had arrived before, pipelined behind another, is still answered at its turn.
 *
 * Registered first, so these checks come before the token's: a saturated provider spends nothing
 * on a request it cannot serve. Health probes are exempt from the in-flight and event-loop limits.
 */
export default fp<LoadLimitsOptions>(async function loadLimits (fastify, options) {
  const { maxRequestsInFlight, maxPipelinedRequests, retryAfterSeconds } = options
  const refuse = (reply: FastifyReply) => {
    reply.header('retry-after', String(retryAfterSeconds))
    return sendError(reply, 'service_unavailable')
  }

  let inFlight = 0
  let closing = false
  fastify.addHook('preClose', (done) => {
    closing = true
    done()
  })

  /** Gives the connection's turn to the next request waiting on it, if any. */
  const passTurn = (turns: ConnectionTurns | undefined) => {
    if (turns === undefined) return
    const next = turns.waiting.shift()
    if (next === undefined) {
      turns.busy = false
      turns.current = undefined
    } else next()
  }

  // @fastify/under-pressure measures the event loop's delay; the check is here, in the one hook
  // (its own hook read `request.routeOptions`, a new object on every read, on every request).
  // Loading the store blocks the event loop for seconds (parsing, then its compacting collection)
  // before the server listens; the first samples after it still show that delay, which is no
  // load at all. Until the loop has been measured for a while after start-up, it is not judged.
  let judgedFrom = Number.POSITIVE_INFINITY
  fastify.addHook('onReady', async () => { judgedFrom = Date.now() + START_UP_GRACE_MS })
  await fastify.register(underPressure, { exposeStatusRoute: false })
  const { maxEventLoopDelayMs } = options
  /** Starts a request that has its connection's turn and is counted, unless the event loop is overloaded. */
  const begin = (request: FastifyRequest, reply: FastifyReply, isPublic: boolean, done: HookHandlerDoneFunction) => {
    if (!isPublic && fastify.memoryUsage().eventLoopDelay > maxEventLoopDelayMs && Date.now() >= judgedFrom) {
      request.log.warn('refused: the event loop is overloaded')
      refuse(reply)
      return
    }
    done()
  }

  // The common path (no request waiting on the connection) allocates one closure and adds one
  // listener: this runs on every request.
  fastify.addHook('onRequest', function oneAtATimePerConnection (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const socket = request.raw.socket as TurnSocket | null
    const arrivedClosing = closing
    let turns = socket?.[kTurns]
    if (turns === undefined && socket !== null) socket[kTurns] = turns = { busy: false, current: undefined, waiting: [] }
    if (turns === undefined || !turns.busy) {
      if (turns !== undefined) {
        turns.busy = true
        turns.current = reply
      }
      if (arrivedClosing) {
        reply.raw.on('close', () => passTurn(turns))
        refuse(reply)
        return
      }
      const config = request.routeOptions.config
      const isPublic = config.public === true
      if (config.stream === true) {
        reply.raw.on('close', () => passTurn(turns))
        begin(request, reply, isPublic, done)
        return
      }
      const counted = inFlight < maxRequestsInFlight || isPublic
      if (counted) inFlight++
      reply.raw.on('close', () => {
        if (counted) inFlight--
        passTurn(turns)
      })
      if (counted) begin(request, reply, isPublic, done)
      else refuse(reply)
      return
    }
    // The answer this one waits for is not held for a batch of the event loop's turns.
    if (turns.current !== undefined) writeAtOnce(turns.current)
    if (turns.waiting.length >= maxPipelinedRequests) {
      refuse(reply)
      return
    }
    // Pipelined behind an answer not yet finished: wait for the connection's turn.
    let state: 'waiting' | 'counted' | 'refused' | 'closed' = 'waiting'
    const takeTurn = () => {
      // Requests may be pipelined behind this one: its answer is not held for a batch either.
      turns!.current = reply
      writeAtOnce(reply)
      // Node does not close the answers queued behind the current one when the connection dies:
      // a request still waiting then would run, and build its answer for no one (ten connections
      // of pipelined year-long requests, closed, built 160 answers of 512 KiB: +80 MB of RSS
      // until a full collection). Its socket tells.
      if (state === 'closed' || request.raw.socket?.destroyed === true) {
        state = 'closed'
        passTurn(turns)
        return
      }
      const isPublic = request.routeOptions.config.public === true
      if (arrivedClosing || (inFlight >= maxRequestsInFlight && !isPublic)) {
        state = 'refused'
        refuse(reply)
        return
      }
      state = 'counted'
      inFlight++
      begin(request, reply, isPublic, done)
    }
    reply.raw.on('close', () => {
      const was = state
      // Already given up for its dead connection: its turn was passed then.
      if (was === 'closed') return
      state = 'closed'
      if (was === 'counted') inFlight--
      if (was !== 'waiting') {
        passTurn(turns)
        return
      }
      // Still waiting when the connection died: it never starts.
      const at = turns!.waiting.indexOf(takeTurn)
      if (at !== -1) turns!.waiting.splice(at, 1)
    })
    turns.waiting.push(takeTurn)
  })
}, { name: 'load-limits', fastify: '5.x' })
