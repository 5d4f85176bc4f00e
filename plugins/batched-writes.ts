import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'

type SendDone = (error?: Error | null) => void

/**
 * Answers are written together, once the event loop has handled every request that arrived with
 * them: an `onSend` hook holds each answer until the loop's check phase (`setImmediate`), then lets
 * them all go in the order they came (Netty's flush consolidation, in Fastify's terms).
 *
 * Written one by one, each answer's `writev` came between two requests' JavaScript: the CPU went
 * from the provider's code to the kernel's TCP code and back for every request, and each write
 * tended to find its client asleep again and paid for waking it. Held to the end of the batch,
 * the handlers run back to back, then the writes. An answer waits at most for the other requests
 * of its batch (microseconds each for the memory store); a lone request waits for nothing but the
 * hop to the check phase. Measured in BENCHMARKS.md ("What profiling found", batched writes).
 *
 * A held answer counts as sent for Fastify (`reply.hijack()`: `reply.sent` is true), as it would
 * be had it been written at once: a handler or hook that sends and then resolves is not answered
 * twice, and `await reply` (a returned reply) resolves at once instead of watching the response
 * for its end. Fastify's own continuation, called here, then writes the answer as it always does
 * (it does not look at that flag). The event stream takes its socket over before any send, and
 * is not held.
 */
export default fp(async function batchedWrites (fastify) {
  let held: SendDone[] = []
  let heldReplies: FastifyReply[] = []
  const release = () => {
    const dones = held
    const replies = heldReplies
    held = []
    heldReplies = []
    for (let i = 0; i < dones.length; i++) {
      try {
        dones[i]!()
      } catch (error) {
        // Written in its handler's turn, the failure (a header Node refuses, say) would have
        // become that route's; here the answer is lost, the other answers of the batch must still
        // go out, and its client must not wait for it.
        const reply = replies[i]!
        reply.log.error({ err: error }, 'an answer could not be written')
        reply.raw.destroy()
      }
    }
  }
  fastify.addHook('onSend', function holdUntilBatchEnds (_request, reply, _payload, done) {
    reply.hijack()
    if (held.length === 0) setImmediate(release)
    held.push(done)
    heldReplies.push(reply)
  })
}, { name: 'batched-writes', fastify: '5.x' })
