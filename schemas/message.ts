import { Type, type Static } from '@sinclair/typebox'
import { Identifier } from './identifier.js'

export const MessageCategory = Type.Union([Type.Literal('alert'), Type.Literal('notification')])
export type MessageCategory = Static<typeof MessageCategory>

/** One event as it goes out on the wire; the field order is the order of serialisation. */
export const Message = Type.Object({
  message_id: Type.String(),
  message_code: Type.String(),
  message_category: MessageCategory,
  date_time: Type.String(),
  device_id: Type.Optional(Type.String()),
  space_id: Type.Optional(Type.String())
}, { $id: 'Message', additionalProperties: false })

export type Message = Static<typeof Message>

/**
 * One line of an events file or of an ingest. Stricter than the wire object: every event carries
 * the space it happened in, and date_time is an RFC 3339 date-time within the range every store
 * can hold (see `event-time` in src/time/rfc3339.ts).
 */
export const MessageRecord = Type.Object({
  message_id: Identifier,
  message_code: Identifier,
  message_category: MessageCategory,
  date_time: Type.String({ format: 'event-time' }),
  device_id: Type.Optional(Identifier),
  space_id: Identifier
}, { additionalProperties: false })

export type MessageRecord = Static<typeof MessageRecord>
