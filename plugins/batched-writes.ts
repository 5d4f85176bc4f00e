import fp from 'fastify-plugin'
import { holdAnswer } from '../src/http/held-answers.js'

/**
 * Answers are written together, once the event loop has handled every request that arrived with
 * them: an `onSend` hook holds each answer until the loop's check phase (`setImmediate`), then lets
 * them all go in the order they came (Netty's flush consolidation, in Fastify's terms). The queue
 * is src/http/held-answers.ts.
 *
 * Written one by one, each answer's `writev` came between two requests' JavaScript: the CPU went
 * from the provider's code to the kernel's TCP code and back for every request, and each write
 * tended to find its client asleep again and paid for waking it. Held to the end of the batch,
 * the handlers run back to back, then the writes. An answer waits at most for the other requests
 * of its batch (microseconds each for the memory store); a lone request waits for nothing but the
 * hop to the check phase; a large answer's streaming lets the held answers go before each of its
 * chunks. Measured in BENCHMARKS.md ("What profiling found", batched writes).
 *
 * A held answer counts as sent for Fastify (`reply.hijack()`: `reply.sent` is true), as it would
 * be had it been written at once: a handler or hook that sends and then resolves is not answered
 * twice, and `await reply` (a returned reply) resolves at once instead of watching the response
 * for its end. Fastify's own continuation, called later, then writes the answer as it always does
 * (it does not look at that flag). The event stream takes its socket over before any send, and
 * is not held.
 */
export default fp(async function batchedWrites (fastify) {
  fastify.addHook('onSend', function holdUntilBatchEnds (_request, reply, _payload, done) {
    reply.hijack()
    holdAnswer(reply, done)
  })
}, { name: 'batched-writes', fastify: '5.x' })
