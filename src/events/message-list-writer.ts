import type { Message } from '../../schemas/message.js'
import { encodeMessage } from '../store/message-json.js'

/** Below half of Buffer.poolSize, allocUnsafe slices a shared pool instead of allocating: small answers stay cheap. */
const INITIAL_CAPACITY = 4095
const EMPTY = Buffer.alloc(0)

/**
 * Builds the bytes of an answer: events a store handed over encoded are copied, others
 * serialised straight into the buffer, which grows as needed.
 */
export class MessageListWriter {
  #buffer = Buffer.allocUnsafe(INITIAL_CAPACITY)
  #length = 0
  /** What the next buffer starts at: a writer that grew once (a large answer) keeps its size. */
  #capacity = INITIAL_CAPACITY

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
    this.#capacity = Math.min(this.#buffer.length, 64 * 1024)
    this.#buffer = EMPTY
    this.#length = 0
    return written
  }

  #reserve (size: number): void {
    if (this.#length + size <= this.#buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#capacity, this.#length + size))
    this.#buffer.copy(grown, 0, 0, this.#length)
    this.#buffer = grown
  }
}
