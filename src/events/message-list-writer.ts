import type { Message } from '../../schemas/message.js'
import { encodeMessage } from '../store/message-json.js'
import { giveBackAnswerBuffer, lendAnswerBuffer } from './answer-buffers.js'

const EMPTY = Buffer.alloc(0)

/**
 * The size of the buffers a streamed answer's chunks are written into: a chunk is taken once it
 * passes 32 KiB (render-events-body.ts), so this leaves room for the event that passed it (a
 * larger one grows the buffer). Every byte of it is garbage once the chunk is written, and those
 * buffers are what large answers make RSS grow by: 64 KiB buffers left about 37 MB of them per
 * large answer, and `--only compression` runs grew the RSS by +74 to +79 MB; with 36 KiB, +37 to
 * +41 MB at the same answers/s (two runs each, BENCHMARKS.md).
 */
const CHUNK_CAPACITY = 36 * 1024

/**
 * Builds the bytes of an answer: events a store handed over encoded are copied, others
 * serialised straight into the buffer, which grows as needed. The first buffer is lent
 * (answer-buffers.ts): what take() returns first is to be given back once written out.
 */
export class MessageListWriter {
  #buffer = lendAnswerBuffer()
  #length = 0

  get length (): number {
    return this.#length
  }

  text (text: string): void {
    this.#reserve(Buffer.byteLength(text))
    this.#length += this.#buffer.write(text, this.#length)
  }

  /** The separator between list items. */
  comma (): void {
    this.#reserve(1)
    this.#buffer[this.#length++] = 0x2c
  }

  message (message: Message): void {
    this.text(encodeMessage(message))
  }

  /** A message's JSON as a store encoded it: a range of one of its buffers. */
  encoded (bytes: Buffer, start: number, end: number): void {
    this.#reserve(end - start)
    this.#length += bytes.copy(this.#buffer, this.#length, start, end)
  }

  /** The bytes written so far; the writer starts again empty. */
  take (): Buffer {
    const written = this.#buffer.subarray(0, this.#length)
    this.#buffer = EMPTY
    this.#length = 0
    return written
  }

  #reserve (size: number): void {
    if (this.#length + size <= this.#buffer.length) return
    const before = this.#buffer
    const grown = Buffer.allocUnsafe(Math.max(before.length * 2, CHUNK_CAPACITY, this.#length + size))
    before.copy(grown, 0, 0, this.#length)
    this.#buffer = grown
    // Outgrown: nothing refers to it any more.
    giveBackAnswerBuffer(before)
  }
}
