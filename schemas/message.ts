import { Type, type Static } from '@sinclair/typebox'
import { Identifier } from './identifier.js'

export const MessageCategory = Type.Union([Type.Literal('alert'), Type.Literal('notification')])
export type MessageCategory = Static<typeof MessageCategory>

/** One event as it goes out on the wire; the field order is the order of serialisation. */
export const Message = Type.Object({
  message_id: Type.String({ description: 'the event\'s unique ID' }),
  message_code: Type.String({ description: 'what happened (see /event_specifications)' }),
  message_category: MessageCategory,
  date_time: Type.String({ description: 'when it happened: an RFC 3339 date-time in UTC, with milliseconds' }),
  device_id: Type.Optional(Type.String({ description: 'the device it happened to (absent for an event of a space)' })),
  space_id: Type.Optional(Type.String({ description: 'the space it happened in' }))
}, { $id: 'Message', additionalProperties: false, description: 'One event (an alert or a notification)' })

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
