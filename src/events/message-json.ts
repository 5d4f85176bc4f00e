import fastJson from 'fast-json-stringify'
import { Message } from '../../schemas/message.js'

const serializeMessage = fastJson(Message)

/** Where a message kept in memory for its whole life carries its own wire text. */
const JSON_TEXT = Symbol('message JSON')

interface WithJson {
  [JSON_TEXT]?: string
}

/**
 * Serialises once, ahead: a store that keeps messages for its whole life (the memory store) pays
 * the serialisation at load instead of on every answer. Symbol-keyed, so never part of the JSON.
 */
export function keepJson<T extends Message> (message: T): T {
  const json = serializeMessage(message)
  // The serializer builds its text by concatenation, which V8 keeps as a tree of pieces (about
  // four times the flat size); reading a character flattens it before it is kept for good.
  json.charCodeAt(0)
  ;(message as WithJson)[JSON_TEXT] = json
  return message
}

/** The wire text of a message, in the schema's field order. */
export function messageJson (message: Message): string {
  return (message as WithJson)[JSON_TEXT] ?? serializeMessage(message)
}
