import { isUtf8 } from 'node:buffer'
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { MessageRecord } from '../../schemas/message.js'
import type { Message } from '../../schemas/message.js'
import { formatEventTime, parseEventTime } from '../time/rfc3339.js'
import { duplicateKeyIn } from './duplicate-key.js'
import { compileSchemaCheck } from './schema-check.js'
import { encodeMessage } from '../store/message-json.js'
import { jsonBytesOf, type JsonBytes } from './json-bytes.js'
import { WireEvent } from './wire-line.js'

const recordCheck = compileSchemaCheck(MessageRecord)

/**
 * An event as the stores keep it: the wire object (UTC date_time, field order) and its time. The
 * message may be made only when first read (WireEvent, for a line in the plain wire form).
 */
export interface StoredEvent {
  readonly message: Message
  readonly epochMs: number
}

/** The event's message_id, without making its message when it is a WireEvent. */
export function messageIdOf (event: StoredEvent): string {
  return event instanceof WireEvent ? event.messageId : event.message.message_id
}

/** The event's device and space, without making its message when it is a WireEvent. */
export function entitiesOf (event: StoredEvent): Pick<Message, 'device_id' | 'space_id'> {
  return event instanceof WireEvent ? event : event.message
}

export type EventLine =
  /** json: the event's wire JSON, byte for byte as the events endpoint serves it. */
  | { line: number, event: StoredEvent, json: JsonBytes }
  | { line: number, problem: string }

/** Checks one NDJSON line against the message schema; undefined for a blank line. */
export function parseEventLine (text: string, line: number): EventLine | undefined {
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { line, problem: `invalid JSON (${(error as Error).message})` }
  }
  const repeated = duplicateKeyIn(text)
  if (repeated !== undefined) return { line, problem: `${JSON.stringify(repeated)} is given twice` }
  if (!recordCheck.is(value)) {
    const problem = recordCheck.problem(value)!
    return { line, problem: problem.path === '' ? problem.reason : `${problem.path}: ${problem.reason}` }
  }
  for (const field of IDENTIFIER_FIELDS) {
    const id = value[field]
    if (id !== undefined && LONE_SURROGATE.test(id)) return { line, problem: `${field}: ${JSON.stringify(id)} holds a lone surrogate, which is not text (UTF-8 cannot carry it, so no store could keep it as sent)` }
  }
  const epochMs = parseEventTime(value.date_time)!
  const message: Message = {
    message_id: value.message_id,
    message_code: value.message_code,
    message_category: value.message_category,
    date_time: formatEventTime(epochMs)
  }
  if (value.device_id !== undefined) message.device_id = value.device_id
  message.space_id = value.space_id
  return { line, event: { message, epochMs }, json: jsonBytesOf(encodeMessage(message)) }
}

const IDENTIFIER_FIELDS = ['message_id', 'message_code', 'device_id', 'space_id'] as const

/** Half of a surrogate pair without its other half (a JSON escape such as "\ud800" can make one). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a line whose bytes are not UTF-8 is refused: JSON text is UTF-8, and decoding it would put U+FFFD in place of the bad bytes, another event than the one sent. */
export const NOT_UTF8 = 'invalid JSON: the line is not valid UTF-8'

/**
 * Reads an NDJSON events file line by line, without holding the text in memory. Lines are cut
 * from latin1 text (one character per byte, and a line break never falls inside a UTF-8
 * sequence), so each line's own bytes can be checked: one that is not UTF-8 is refused
 * (NOT_UTF8) instead of being decoded into another event.
 */
export async function * readEventLines (file: string): AsyncGenerator<EventLine> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'latin1' }), crlfDelay: Infinity })
  let line = 0
  for await (const raw of lines) {
    line++
    const bytes = Buffer.from(raw, 'latin1')
    const parsed = isUtf8(bytes) ? parseEventLine(bytes.toString('utf8'), line) : { line, problem: NOT_UTF8 }
    if (parsed !== undefined) yield parsed
  }
}

/** Two lines with the same message_id are the same event only when every field agrees. */
export function sameEvent (a: Message, b: Message): boolean {
  return a.message_code === b.message_code && a.message_category === b.message_category &&
    a.date_time === b.date_time && a.device_id === b.device_id && a.space_id === b.space_id
}
