import { setImmediate as checkPhase } from 'node:timers/promises'
import type { FastifyReply } from 'fastify'

/** Fastify's continuation of a send, after its onSend hooks: it writes the answer. */
export type WriteAnswer = (error?: Error | null) => void

/**
 * The answers held until the event loop has handled every request of their batch
 * (plugins/batched-writes.ts). One queue per process, as there is one event loop: the answers of
 * every Fastify instance in it go out together.
 */
let held: WriteAnswer[] = []
let heldReplies: FastifyReply[] = []

/** Holds an answer until the check phase (or until writeHeldAnswers is called before it). */
export function holdAnswer (reply: FastifyReply, write: WriteAnswer): void {
  if (held.length === 0) setImmediate(writeHeldAnswers)
  held.push(write)
  heldReplies.push(reply)
}

/**
 * Writes every held answer now, in the order they were held. The streaming of a large answer
 * calls it before each chunk's work, so that the small answers of the batch do not wait for it.
 */
export function writeHeldAnswers (): void {
  if (held.length === 0) return
  const writes = held
  const replies = heldReplies
  held = []
  heldReplies = []
  for (let i = 0; i < writes.length; i++) {
    try {
      writes[i]!()
    } catch (error) {
      // Written in its handler's turn, the failure (a header Node refuses, say) would have become
      // that route's; here the answer is lost, the other answers of the batch must still go out,
      // and its client must not wait for it.
      const reply = replies[i]!
      reply.log.error({ err: error }, 'an answer could not be written')
      reply.raw.destroy()
    }
  }
}

/**
 * An event-loop turn for long work (a large answer's chunks): the held answers go out first, so
 * the small answers of a batch never wait for a chunk's work.
 */
export async function nextTurn (): Promise<void> {
  await checkPhase()
  writeHeldAnswers()
}
