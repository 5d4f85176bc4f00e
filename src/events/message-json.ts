import fastJson from 'fast-json-stringify'
import { Type } from '@sinclair/typebox'
import { Message } from '../../schemas/message.js'

/**
 * The wire schema with message_category as a plain string: fast-json-stringify checks which
 * member of a union a value is with Ajv on every call, and for writing, every field is simply a
 * string. The spread keeps the schema's field order.
 */
const serializeMessage = fastJson(Type.Object({ ...Message.properties, message_category: Type.String() }))

/** Where a message kept in memory for its whole life finds its wire bytes: a range of a shared buffer. */
const BYTES = Symbol('message JSON bytes')
const START = Symbol('message JSON start')
const END = Symbol('message JSON end')

interface WithBytes {
  [BYTES]?: Buffer
  [START]?: number
  [END]?: number
}

/**
 * Serialises a store's messages once, ahead, into one buffer: a store that keeps messages for
 * its whole life (the memory store) then answers by copying bytes, with no serialisation, no
 * encoding and no string garbage per answer. Symbol-keyed, so never part of the JSON itself.
 */
export function keepJsonBytes (messages: readonly Message[]): void {
  const texts = messages.map((message) => serializeMessage(message))
  const bytes = Buffer.allocUnsafe(texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0))
  let offset = 0
  messages.forEach((message, i) => {
    const end = offset + bytes.write(texts[i]!, offset)
    const kept = message as WithBytes
    kept[BYTES] = bytes
    kept[START] = offset
    kept[END] = end
    offset = end
  })
}

/** Below half of Buffer.poolSize, allocUnsafe slices a shared pool instead of allocating: small answers stay cheap. */
const INITIAL_CAPACITY = 4095
const EMPTY = Buffer.alloc(0)

/**
 * Builds the bytes of a message list: bytes kept ahead are copied, other messages serialised
 * straight into the buffer, which grows as needed.
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
    const kept = message as WithBytes
    const bytes = kept[BYTES]
    if (bytes === undefined) {
      this.text(serializeMessage(message))
      return
    }
    const start = kept[START]!
    const end = kept[END]!
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
