import type { Socket } from 'node:net'
import fp from 'fastify-plugin'

export interface ClosingConnectionsOptions {
  /** From the start of the close: connections still open then are ended, answer or not. */
  closeConnectionsAfterMs?: number
}

const kAcceptedAt = Symbol('accepted at')

/**
 * The request a connection is answering: Node's ServerResponse, from the request's headers until
 * its answer is written, then the next pipelined one's, else none. Node's own
 * `closeIdleConnections` reads it, as does http-terminator; it is not in Node's typings.
 */
type HttpSocket = Socket & { _httpMessage?: unknown, [kAcceptedAt]?: number }

/** While the server closes, how often the connections that have gone idle since are ended. */
const IDLE_CHECK_MS = 100

/**
 * A connection accepted after the close began (the server listens until the close's first steps
 * are done: up to 5 s for the ingests under way) has this long for its request to arrive, which is
 * then answered 503; ended at the first check, it would have been reset with no answer at all.
 */
const NEW_CONNECTION_GRACE_MS = 1000

/**
 * Well within close-with-grace's 10 s (src/server.ts) and Docker's default stop timeout (10 s,
 * then SIGKILL): the event streams end after at most 5 s of ingests under way
 * (plugins/live-events.ts), and the MQTT publisher flushes for at most 3 s after the server
 * has closed.
 */
export const CLOSE_CONNECTIONS_AFTER_MS = 6000

/**
 * Ends the connections as the server closes, so that a shutdown waits for the answers under way
 * and for nothing else. Node's server, once closing, ends only the connections idle at that
 * moment, once, and stops timing out requests that are slow to arrive: a connection that had
 * sent nothing yet (a browser's preconnect, a load balancer's probe) or part of a request's
 * headers, an answer under way whose headers had gone out with keep-alive (a large answer
 * streaming), or a reader that never reads, each held the close until close-with-grace's
 * deadline, and the process exited 1. Here, from the start of the close:
 *
 * - a connection with no answer under way (nothing sent, part of a request, or between two
 *   requests) is ended at once, and every 100 ms afterwards (an answer that was under way has
 *   been written: its connection is between requests now); one accepted after the close began
 *   is given a second for its request first (answered 503: plugins/load-limits.ts);
 * - a connection still open `closeConnectionsAfterMs` later (a reader too slow for its answer, a
 *   stream whose client stopped reading) is ended then, and a warning says how many.
 *
 * A request whose headers have arrived has an answer under way and is waited for (an ingest
 * whose body is still arriving). Answers written while closing say `Connection: close`
 * (plugins/batched-writes.ts).
 */
export default fp<ClosingConnectionsOptions>(async function closingConnections (fastify, options) {
  const closeConnectionsAfterMs = options.closeConnectionsAfterMs ?? CLOSE_CONNECTIONS_AFTER_MS
  const sockets = new Set<HttpSocket>()
  let closeBeganAt = Number.POSITIVE_INFINITY
  fastify.server.on('connection', (socket: HttpSocket) => {
    sockets.add(socket)
    socket[kAcceptedAt] = performance.now()
    socket.once('close', () => { sockets.delete(socket) })
  })
  const endConnectionsWithoutAnswers = () => {
    const graceFrom = performance.now() - NEW_CONNECTION_GRACE_MS
    for (const socket of sockets) {
      if (socket._httpMessage != null) continue
      const acceptedAt = socket[kAcceptedAt]!
      if (acceptedAt >= closeBeganAt && acceptedAt > graceFrom) continue
      socket.destroy()
    }
  }
  fastify.addHook('preClose', (done) => {
    closeBeganAt = performance.now()
    endConnectionsWithoutAnswers()
    const idleCheck = setInterval(endConnectionsWithoutAnswers, IDLE_CHECK_MS).unref()
    const deadline = setTimeout(() => {
      fastify.log.warn({ connections: sockets.size, afterMs: closeConnectionsAfterMs }, 'closing: connections whose answers were still being written are ended')
      for (const socket of sockets) socket.destroy()
    }, closeConnectionsAfterMs).unref()
    fastify.server.once('close', () => {
      clearInterval(idleCheck)
      clearTimeout(deadline)
    })
    done()
  })
}, { name: 'closing-connections', fastify: '5.x' })
