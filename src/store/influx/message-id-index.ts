import type { Message } from '../../../schemas/message.js'
import { Message as MessageSchema } from '../../../schemas/message.js'
import { compileSchemaCheck } from '../../data/schema-check.js'
import { encodeMessage } from '../message-json.js'
import { idHash32, nanosecondsOf } from './event-point.js'
import { measurementName, quotedField } from './line-protocol.js'

/**
 * The message_id index. message_id is a field of the event points (a tag per ID would make a
 * series per event), so finding an ID among them means reading every point of the window: five
 * IDs over a year of a million events took InfluxDB over 5 s. So the ingest keeps, beside each
 * event point, an index point in the measurement `<measurement>_by_id`:
 *
 * - tag `id_hash`: 16 bits of a hash of the message_id, as 4 hex digits: 65,536 series, each
 *   holding about 15 points per million events;
 * - field `message`: the event's wire JSON, so a lookup needs no second query;
 * - time: the event point's own timestamp (its millisecond and slot).
 *
 * A lookup of n IDs reads n small series; the ingest looks every ID of a batch up across all time
 * (the provider: every ID it cannot rule out, known-events.ts), so a message_id already used for
 * another event is refused wherever in time it was stored. It lives in InfluxDB itself, so every
 * provider instance shares it.
 */
export const INDEX_SUFFIX = '_by_id'

export function indexMeasurementOf (measurement: string): string {
  return measurement + INDEX_SUFFIX
}

/** The top 16 bits of the ID's hash (the same hash as its slot's: event-point.ts), as 4 hex digits. */
export function idHashOf (messageId: string): string {
  return (idHash32(messageId) >>> 16).toString(16).padStart(4, '0')
}

/** The distinct hashes of some IDs, in first-seen order. */
export function idHashesOf (messageIds: Iterable<string>): string[] {
  return [...new Set([...messageIds].map(idHashOf))]
}

export function toIndexLine (measurement: string, message: Message, epochMs: number, slot: number): string {
  return measurementName(indexMeasurementOf(measurement)) + ',id_hash=' + idHashOf(message.message_id) +
    ' message=' + quotedField(encodeMessage(message)) + ' ' + nanosecondsOf(epochMs, slot)
}

const messageCheck = compileSchemaCheck(MessageSchema)

/** The event of an index point; undefined for a value that is not one (written by something else). */
export function indexedMessageOf (json: string | undefined): Message | undefined {
  if (json === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  if (!messageCheck.is(value)) return undefined
  // Rebuilt in wire order, whatever order the stored JSON had.
  const message: Message = { message_id: value.message_id, message_code: value.message_code, message_category: value.message_category, date_time: value.date_time }
  if (value.device_id !== undefined) message.device_id = value.device_id
  if (value.space_id !== undefined) message.space_id = value.space_id
  return message
}
