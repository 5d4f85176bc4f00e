import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { MessageRecord } from '../../schemas/message.js'
import type { Message } from '../../schemas/message.js'
import { formatEventTime, parseEventTime } from '../time/rfc3339.js'
import { duplicateKeyIn } from './duplicate-key.js'
import { compileSchemaCheck } from './schema-check.js'
import { encodeMessage } from '../store/message-json.js'

const recordCheck = compileSchemaCheck(MessageRecord)

/** An event as the stores keep it: the wire object (UTC date_time, field order) and its time. */
export interface StoredEvent {
  message: Message
  epochMs: number
}

export type EventLine =
  | { line: number, event: StoredEvent }
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
  const epochMs = parseEventTime(value.date_time)!
  const message: Message = {
    message_id: value.message_id,
    message_code: value.message_code,
    message_category: value.message_category,
    date_time: formatEventTime(epochMs)
  }
  if (value.device_id !== undefined) message.device_id = value.device_id
  message.space_id = value.space_id
  return { line, event: { message, epochMs } }
}

/**
 * Whether a valid event-time is in the wire form, `2026-11-20T10:00:00.000Z`: of the RFC's forms,
 * the only one 24 characters long with an upper-case T and Z.
 */
function isWireTime (valid: string): boolean {
  return valid.length === 24 && valid.charCodeAt(10) === 0x54 && valid.charCodeAt(23) === 0x5a
}

/** The wire form's keys, in order, and the length of its text around the values (keys, quotes, punctuation). */
const WIRE_KEYS_WITH_DEVICE = ['message_id', 'message_code', 'message_category', 'date_time', 'device_id', 'space_id']
const WIRE_KEYS_WITHOUT_DEVICE = WIRE_KEYS_WITH_DEVICE.filter((key) => key !== 'device_id')
const FRAME_WITH_DEVICE = encodeMessage({ message_id: '', message_code: '', message_category: '' as Message['message_category'], date_time: '', device_id: '', space_id: '' }).length
const FRAME_WITHOUT_DEVICE = encodeMessage({ message_id: '', message_code: '', message_category: '' as Message['message_category'], date_time: '', space_id: '' }).length

/**
 * Whether a line is its record's wire JSON, without serialising the record to compare (that was
 * a third of a load). The line parsed to this record, so it is one JSON object of these keys with
 * string values. With no backslash in it, no string was escaped, so each value is written as it
 * is; then the only other freedoms JSON leaves, spaces and repeated keys, each make the text
 * longer than the wire form, so equal lengths leave only the keys' order to check.
 */
function isWireText (text: string, record: MessageRecord): boolean {
  if (text.includes('\\')) return false
  const device = record.device_id
  const length = (device === undefined ? FRAME_WITHOUT_DEVICE : FRAME_WITH_DEVICE + device.length) +
    record.message_id.length + record.message_code.length + record.message_category.length + record.date_time.length + record.space_id.length
  if (text.length !== length) return false
  const keys = device === undefined ? WIRE_KEYS_WITHOUT_DEVICE : WIRE_KEYS_WITH_DEVICE
  let k = 0
  for (const key in record) {
    if (key !== keys[k++]) return false
  }
  return true
}

/**
 * A line that is already an event's wire JSON, byte for byte as the stores write it (field order,
 * no spaces, a UTC date_time with milliseconds), and a valid record: its event, whose message is
 * the parsed object itself. Otherwise undefined, and parseEventLine says what it is. Every line
 * the provider and its generator write has this form, so loading a large file takes this way:
 * one parse and one check, instead of a copy of every field and a scan for repeated keys.
 */
export function parseWireLine (text: string): { event: StoredEvent, wire: string } | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!recordCheck.is(value) || !isWireTime(value.date_time) || !isWireText(text, value)) return undefined
  const epochMs = parseEventTime(value.date_time)!
  return { event: { message: value, epochMs }, wire: text }
}

/** Reads an NDJSON events file line by line, without holding the text in memory. */
export async function * readEventLines (file: string): AsyncGenerator<EventLine> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })
  let line = 0
  for await (const text of lines) {
    line++
    const parsed = parseEventLine(text, line)
    if (parsed !== undefined) yield parsed
  }
}

/** Two lines with the same message_id are the same event only when every field agrees. */
export function sameEvent (a: Message, b: Message): boolean {
  return a.message_code === b.message_code && a.message_category === b.message_category &&
    a.date_time === b.date_time && a.device_id === b.device_id && a.space_id === b.space_id
}
