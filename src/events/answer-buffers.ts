/**
 * The memory behind whole answers, reused. Each answer used to be written into new buffers
 * (4 KiB, doubled as it grew): under load, hundreds of megabytes a second of fresh memory, each
 * page faulted in by the kernel on its first write, and V8 collecting the heap to free them. A
 * medium answer (234 kB) spent a third of its time writing into new pages (BENCHMARKS.md,
 * "What profiling found"). Now an answer takes a buffer from here and gives it back once it has
 * been written to the socket; a buffer never given back (a client gone before the end, a
 * streamed answer) is simply collected.
 */

/** Room for a whole answer (256 KiB) and the event that passed that size, with margin. */
export const ANSWER_BUFFER_BYTES = 512 * 1024

/** Buffers kept for reuse at most: 32 MiB, more than the answers in flight at once under load. */
const KEPT_AT_MOST = 64

const kept: ArrayBuffer[] = []
/** Lent and not yet given back: only these are taken back (weakly held: a lost one is collected). */
const lent = new WeakSet<ArrayBuffer>()

export function lendAnswerBuffer (): Buffer {
  const memory = kept.pop() ?? new ArrayBuffer(ANSWER_BUFFER_BYTES)
  lent.add(memory)
  return Buffer.from(memory)
}

/**
 * Gives back the memory of an answer (any part of a lent buffer) once nothing reads it any more:
 * after the response has finished. Anything else is ignored.
 */
export function giveBackAnswerBuffer (answer: Uint8Array): void {
  const memory = answer.buffer as ArrayBuffer
  if (!lent.delete(memory)) return
  if (kept.length < KEPT_AT_MOST) kept.push(memory)
}
