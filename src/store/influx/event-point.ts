import type { Message, MessageCategory } from '../../../schemas/message.js'
import { formatEventTime } from '../../time/rfc3339.js'
import { measurementName, nanosecondsText, quotedField, tagText } from './line-protocol.js'
import { decodeTagValue, encodeTagValue } from './tag-value.js'

/**
 * How events are points. Tags (indexed, bounded cardinality, what queries filter on): device_id
 * (device events only), space_id, message_code, message_category. Field: message_id, which is
 * unbounded and so never a tag.
 *
 * A point's identity is measurement + tag set + timestamp, and events carry milliseconds. The
 * six digits below the millisecond hold a slot derived from message_id, so two events of the same
 * series in the same millisecond land on different points, and the same event always lands on
 * the same point (re-ingesting is idempotent).
 *
 * An event's own slot (its primary slot) is the top 19 bits of its message_id's hash, and the
 * message_id index files the event under the top 16 bits of the same hash (message-id-index.ts).
 * So two IDs with the same primary slot share an index hash: the index lookup a write makes for
 * its IDs anyway also returns every indexed event that could hold the slots it is about to take,
 * and no read of the points of the batch's window is needed. When two IDs of one series and
 * millisecond do want the same slot, the writer reads that millisecond's points and takes a
 * free slot above the primary ones (InfluxEventWriter).
 */
export const SLOTS_PER_MS = 1_000_000

/** Slots below this are primary slots; the rest take the events whose primary slot was held. */
export const PRIMARY_SLOTS = 1 << 19

/** FNV-1a over the UTF-16 code units: cheap, stable, and spread well enough for slots and index hashes. */
export function idHash32 (messageId: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < messageId.length; i++) {
    hash ^= messageId.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

/** An event's primary slot: the top 19 bits of its ID's hash (its index hash is the top 16). */
export function slotOf (messageId: string): number {
  return idHash32(messageId) >>> (32 - 19)
}

/** Nanoseconds since the epoch as decimal text: beyond 2^53, so never a JS number. */
export function nanosecondsOf (epochMs: number, slot: number): string {
  return nanosecondsText(epochMs, slot)
}

/** An event's point: tags in key order (device_id, message_category, message_code, space_id), as Point wrote them. */
export function toLineProtocol (measurement: string, message: Message, epochMs: number, slot: number): string {
  let line = measurementName(measurement)
  if (message.device_id !== undefined && message.device_id !== '') line += ',device_id=' + tagText(encodeTagValue(message.device_id))
  line += ',message_category=' + tagText(message.message_category) + ',message_code=' + tagText(encodeTagValue(message.message_code))
  if (message.space_id !== undefined && message.space_id !== '') line += ',space_id=' + tagText(encodeTagValue(message.space_id))
  return line + ' message_id=' + quotedField(message.message_id) + ' ' + nanosecondsOf(epochMs, slot)
}

/** The tag set that, with the timestamp, identifies a point. */
export function seriesKeyOf (message: Message): string {
  return JSON.stringify([message.device_id ?? null, message.space_id, message.message_code, message.message_category])
}

/** A point read back, tags still as stored. */
export interface StoredPointValues {
  message_id: string
  message_code: string
  message_category: string
  device_id?: string | null | undefined
  space_id?: string | null | undefined
}

/**
 * The wire message of a point read back: tags decoded, fields in wire order, UTC milliseconds.
 * A point written by something else may lack a tag; it comes back with empty values, which
 * isEventMessage turns away, rather than failing the whole answer.
 */
export function messageOf (values: StoredPointValues, epochMs: number): Message {
  const message: Message = {
    message_id: values.message_id ?? '',
    message_code: decodeTagValue(values.message_code ?? ''),
    message_category: values.message_category as MessageCategory,
    date_time: formatEventTime(epochMs)
  }
  if (values.device_id != null && values.device_id !== '') message.device_id = decodeTagValue(values.device_id)
  if (values.space_id != null && values.space_id !== '') message.space_id = decodeTagValue(values.space_id)
  return message
}

/** Whether a point read back is an event this provider wrote (see messageOf). */
export function isEventMessage (message: Message): boolean {
  return message.message_id !== '' && message.message_code !== '' &&
    (message.message_category === 'alert' || message.message_category === 'notification')
}

/** RFC 3339 with nanoseconds, as InfluxDB writes times, to milliseconds and the slot below them. */
export function parseStoredTime (text: string): { epochMs: number, slot: number } {
  const match = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/.exec(text)
  if (match === null) throw new Error(`unexpected time from InfluxDB: ${text}`)
  const digits = (match[2] ?? '').padEnd(9, '0')
  return { epochMs: Date.parse(match[1] + '.' + digits.slice(0, 3) + 'Z'), slot: Number(digits.slice(3)) }
}
