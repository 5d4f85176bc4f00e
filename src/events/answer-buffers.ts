/**
 * The memory answers are written into, reused. Each answer used to be written into new buffers
 * (4 KiB, doubled as it grew): under load, hundreds of megabytes a second of fresh memory, each
 * page faulted in by the kernel on its first write, and V8 collecting the heap to free them. A
 * medium answer (234 kB) spent a third of its time writing into new pages (BENCHMARKS.md,
 * "What profiling found"). Now an answer takes a buffer from here and gives it back once it has
 * been written to the socket; a buffer never given back (a client gone before the end) is simply
 * collected.
 *
 * Streamed answers' chunks come from a pool of their own, each given back once its destination
 * has written it (lent-chunk-stream.ts): as new buffers, a large answer (19 MB) left about 530
 * of them to the collector, which V8 frees only once the heap and those buffers together have
 * grown by its factor, and the provider's RSS grew by up to 209 MB under large answers
 * (BENCHMARKS.md, "What profiling found").
 */

/** Room for a whole answer (256 KiB) and the event that passed that size, with margin. */
export const ANSWER_BUFFER_BYTES = 512 * 1024

/**
 * A streamed answer's chunks are taken once they pass this size: each lives and dies young
 * instead of piling up until a full collection, so RSS stays flat while large answers are written.
 */
export const CHUNK_LIMIT = 32 * 1024

/**
 * A streamed chunk's buffer: a chunk is taken once it passes CHUNK_LIMIT (render-events-body.ts), so
 * this leaves room for the event that passed it (a larger one grows the buffer, which is then
 * not lent). 64 KiB left half of each buffer unused (BENCHMARKS.md).
 */
export const CHUNK_BUFFER_BYTES = 36 * 1024

/** Buffers of one size, kept for reuse up to a number; each lent one is known until given back. */
class BufferPool {
  readonly #bytes: number
  readonly #keptAtMost: number
  readonly #kept: ArrayBuffer[] = []

  constructor (bytes: number, keptAtMost: number) {
    this.#bytes = bytes
    this.#keptAtMost = keptAtMost
  }

  lend (): Buffer {
    const memory: LentMemory = this.#kept.pop() ?? new ArrayBuffer(this.#bytes)
    memory[kLentBy] = this
    return Buffer.from(memory)
  }

  keep (memory: ArrayBuffer): void {
    if (this.#kept.length < this.#keptAtMost) this.#kept.push(memory)
  }

  get keptCount (): number {
    return this.#kept.length
  }
}

/**
 * Memory lent and not yet given back names its pool: only such memory is taken back, and a lost
 * one is simply collected. A property of the memory rather than a WeakMap entry: an entry per
 * answer is an ephemeron that every young-generation collection processes (as the store
 * contract's memo was: BENCHMARKS.md, "What profiling found").
 */
const kLentBy = Symbol('lent by')
type LentMemory = ArrayBuffer & { [kLentBy]?: BufferPool | undefined }

/** 32 MiB at most: more than the whole answers in flight at once under load. */
const answers = new BufferPool(ANSWER_BUFFER_BYTES, 64)

/**
 * 18 MiB at most: a streamed answer has a chunk or two on its way at a time (the socket's
 * buffer), so this covers hundreds of answers streaming at once.
 */
const chunks = new BufferPool(CHUNK_BUFFER_BYTES, 512)

/** A buffer for a whole answer (ANSWER_BUFFER_BYTES). */
export function lendAnswerBuffer (): Buffer {
  return answers.lend()
}

/** A buffer for a streamed answer's chunk (CHUNK_BUFFER_BYTES). */
export function lendChunkBuffer (): Buffer {
  return chunks.lend()
}

/** How many chunk buffers wait to be lent again (for tests). */
export function keptChunkBuffers (): number {
  return chunks.keptCount
}

/**
 * Gives back the memory of a lent buffer (any part of it) once nothing reads it any more: after
 * the response, or the chunk, has been written out. Anything else is ignored, and so is a
 * buffer given back twice.
 */
export function giveBackLentBuffer (answer: Uint8Array): void {
  const memory = answer.buffer as LentMemory
  const pool = memory[kLentBy]
  if (pool === undefined) return
  memory[kLentBy] = undefined
  pool.keep(memory)
}
