import fp from 'fastify-plugin'
import { hasRequestsWaiting } from '../src/http/connection-turns.js'
import { closeConnectionsOfHeldAnswers, holdAnswer } from '../src/http/held-answers.js'

/**
 * Answers are written together, once the event loop has handled every request that arrived with
 * them: an `onSend` hook holds each answer until the loop's check phase (`setImmediate`), then lets
 * them all go in the order they came (Netty's flush consolidation, in Fastify's terms). While each
 * turn brings more answers, the batch waits a turn more, four at most. The queue is
 * src/http/held-answers.ts.
 *
 * Written one by one, each answer's `writev` came between two requests' JavaScript: the CPU went
 * from the provider's code to the kernel's TCP code and back for every request, and each write
 * tended to find its client asleep again and paid for waking it. Held to the end of the batch,
 * the handlers run back to back, then the writes. An answer waits at most for the other requests
 * of its batch (microseconds each for the memory store); a lone request waits for the hop to the
 * check phase and one turn of the loop more; a large answer's streaming lets the held answers go
 * before each of its chunks, its next chunk waits while turns keep bringing answers, four turns
 * more at most, and then 2 ms more while other consumers' answers (below 400) are held or were
 * written within 5 ms (the pace of bulk work, nextTurn). A client's FIN does not lose the answers
 * held for it: the server keeps half-closed connections open for the answers they are owed
 * (src/http/half-open.ts). Measured in BENCHMARKS.md ("What profiling found": batched writes,
 * longer batches, the pace of large answers).
 *
 * A held answer is not yet sent for Fastify: a handler that returns its reply (Fastify's
 * documented way to say an async handler has sent) resolves once the answer is written, and a
 * failure after the hold is still answered by the error handler (src/http/held-answers.ts). The
 * events handler answers a memory-store request at once and returns nothing, so it waits for
 * nothing; a request that waited for its turn (src/http/turn-budget.ts), and one the store
 * answers later (InfluxDB), return the reply or await it, and a second send without payload
 * (an async handler that resolved without the reply) is dropped by holdAnswer all the same. The
 * event stream takes its socket over before any send, and is not held.
 */
export default fp(async function batchedWrites (fastify) {
  // Closing, the server ends only the connections that are idle, once: a connection whose answer
  // is held (or still being made) then is not, and it would stay open, keep-alive, until its
  // client left or the keep-alive timeout (72 s) passed. Its answer says Connection: close instead,
  // and Node ends the connection once it is written. An answer under way, its headers already out
  // with keep-alive (a large answer streaming), cannot say so any more: its connection is ended
  // once it is written (plugins/closing-connections.ts).
  let closing = false
  fastify.addHook('preClose', (done) => {
    closing = true
    closeConnectionsOfHeldAnswers(fastify.server)
    done()
  })
  fastify.addHook('onSend', function holdUntilBatchEnds (_request, reply, payload, done) {
    // The last answer the connection owes ends it; one with requests waiting behind it does not.
    if (closing && !hasRequestsWaiting(reply.raw.socket)) reply.raw.shouldKeepAlive = false
    holdAnswer(reply, payload, done)
  })
}, { name: 'batched-writes', fastify: '5.x' })
