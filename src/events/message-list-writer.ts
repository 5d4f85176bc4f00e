import type { Message } from '../../schemas/message.js'
import type { EncodedMessages } from '../store/event-store.js'
import { encodeMessage } from '../store/message-json.js'
import { CHUNK_BUFFER_BYTES, giveBackLentBuffer, lendAnswerBuffer, lendChunkBuffer } from './answer-buffers.js'

const EMPTY = Buffer.alloc(0)
const COMMA = 0x2c

/**
 * Builds the bytes of an answer: events a store handed over encoded are copied, others
 * serialised straight into the buffer, which grows as needed. Its buffers are lent
 * (answer-buffers.ts): the first one an answer's, each after a take() a streamed chunk's; what
 * take() returns is to be given back once written out.
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

  bytes (bytes: Buffer): void {
    this.#reserve(bytes.length)
    this.#length += bytes.copy(this.#buffer, this.#length)
  }

  /** The separator between list items. */
  comma (): void {
    this.#reserve(1)
    this.#buffer[this.#length++] = COMMA
  }

  message (message: Message): void {
    this.text(encodeMessage(message))
  }

  /** A message's JSON as a store encoded it: a range of one of its buffers. */
  encoded (bytes: Buffer, start: number, end: number): void {
    this.#reserve(end - start)
    this.#length += bytes.copy(this.#buffer, this.#length, start, end)
  }

  /**
   * Events [from, to) of a batch a store handed over encoded, each after a comma (but the first
   * when `first`: the list's first event), until one takes the length past `limit`. The index
   * after the last event written. One loop over the batch, not two calls per event: a medium
   * answer's 944 events 92–100 → 82–95 µs in process (BENCHMARKS.md, "What profiling found");
   * what is left is mostly the copy itself, about 40 ns a call to Buffer#copy whatever its size.
   */
  encodedRun (encoded: EncodedMessages, from: number, to: number, first: boolean, limit: number): number {
    if (encoded.run !== undefined) return this.#piece(encoded.run, from, to, first, limit)
    const { bytes, offsets, positions } = encoded
    let buffer = this.#buffer
    let length = this.#length
    for (let i = from; i < to; i++) {
      const position = positions[i]!
      const start = offsets[position]!
      const end = offsets[position + 1]!
      if (length + end - start + 1 > buffer.length) {
        this.#length = length
        this.#reserve(end - start + 1)
        buffer = this.#buffer
      }
      if (i > from || !first) buffer[length++] = COMMA
      length += bytes.copy(buffer, length, start, end)
      if (length > limit) {
        this.#length = length
        return i + 1
      }
    }
    this.#length = length
    return to
  }

  /**
   * encodedRun for events whose JSON the store keeps together, comma separated (EncodedMessages'
   * run): the events up to the one that passes the limit, in one copy.
   */
  #piece (run: NonNullable<EncodedMessages['run']>, from: number, to: number, first: boolean, limit: number): number {
    const { bytes, starts } = run
    const base = run.first
    const start = starts[base + from]!
    const before = this.#length + (first ? 0 : 1)
    // The first event whose end takes the length past the limit, if any: the last one written.
    let low = from
    let high = to - 1
    while (low < high) {
      const middle = (low + high) >>> 1
      if (before + starts[base + middle + 1]! - 1 - start > limit) high = middle
      else low = middle + 1
    }
    const end = starts[base + low + 1]! - 1
    this.#reserve(end - start + 1)
    if (!first) this.#buffer[this.#length++] = COMMA
    this.#length += bytes.copy(this.#buffer, this.#length, start, end)
    return low + 1
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
    // A chunk after take(): from the chunks' pool, unless one event is larger than its buffers.
    if (before === EMPTY && size <= CHUNK_BUFFER_BYTES) {
      this.#buffer = lendChunkBuffer()
      return
    }
    const grown = Buffer.allocUnsafe(Math.max(before.length * 2, CHUNK_BUFFER_BYTES, this.#length + size))
    before.copy(grown, 0, 0, this.#length)
    this.#buffer = grown
    // Outgrown: nothing refers to it any more.
    giveBackLentBuffer(before)
  }
}
