import fastJson from 'fast-json-stringify'
import { Type } from '@sinclair/typebox'
import { Message } from '../../schemas/message.js'

/**
 * A message's wire JSON, from the wire schema. message_category is written as a plain string:
 * fast-json-stringify checks which member of a union a value is with Ajv on every call, and for
 * writing, every field is simply a string. The spread keeps the schema's field order.
 */
export const encodeMessage: (message: Message) => string =
  fastJson(Type.Object({ ...Message.properties, message_category: Type.String() }))

/** Many messages' JSON in one buffer: message i is `bytes` from `offsets[i]` to `offsets[i + 1]`. */
export interface EncodedMessageList {
  bytes: Buffer
  offsets: Uint32Array
}

/**
 * Encodes messages once, ahead, for a store that keeps them for its whole life (the memory
 * store): its answers then copy bytes, with no serialisation, no encoding and no string garbage
 * per answer.
 */
export function encodeMessageList (messages: readonly Message[]): EncodedMessageList {
  const texts = messages.map((message) => encodeMessage(message))
  const bytes = Buffer.allocUnsafe(texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0))
  const offsets = new Uint32Array(messages.length + 1)
  let offset = 0
  texts.forEach((text, i) => {
    offset += bytes.write(text, offset)
    offsets[i + 1] = offset
  })
  return { bytes, offsets }
}
