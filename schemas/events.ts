import { Type, type Static } from '@sinclair/typebox'
import { IdentifierList } from './identifier.js'
import { Message, MessageCategory } from './message.js'

/** Dates stay plain strings here: their rules (403, after the 400s) run in the date-range hook. */
export const EventsQuerystring = Type.Object({
  start_date: Type.String(),
  end_date: Type.Optional(Type.String()),
  device_ids: Type.Optional(IdentifierList),
  space_ids: Type.Optional(IdentifierList),
  tag_ids: Type.Optional(IdentifierList),
  message_ids: Type.Optional(IdentifierList),
  message_category: Type.Optional(MessageCategory),
  message_codes: Type.Optional(IdentifierList)
}, { additionalProperties: false })

export type EventsQuerystring = Static<typeof EventsQuerystring>

/** At most one of these may be given. */
export const exclusiveEventFilters = ['message_ids', 'message_category', 'message_codes'] as const

export const ItemType = {
  device: 'invalid_device',
  space: 'invalid_space',
  tag: 'invalid_tag',
  message_code: 'invalid_message_code'
} as const

export type ItemTypeName = keyof typeof ItemType

export const ItemError = Type.Object({
  id: Type.String(),
  item_type: Type.Union((Object.keys(ItemType) as ItemTypeName[]).map((type) => Type.Literal(type))),
  message: Type.Union(Object.values(ItemType).map((message) => Type.Literal(message)))
}, { $id: 'ItemError', additionalProperties: false })

export type ItemError = Static<typeof ItemError>

export const EventsResponse = Type.Object({
  data: Type.Array(Message),
  errors: Type.Array(ItemError)
}, { additionalProperties: false })

export type EventsResponse = Static<typeof EventsResponse>

/**
 * The stream's parameters: the events endpoint's, without message_ids (it makes no sense live:
 * 400 invalid_parameter, as any unknown name) and end_date, and with start_date optional.
 */
export const EventStreamQuerystring = Type.Object({
  start_date: Type.Optional(Type.String({ description: 'replay the stored events from this date-time before going live' })),
  device_ids: Type.Optional(IdentifierList),
  space_ids: Type.Optional(IdentifierList),
  tag_ids: Type.Optional(IdentifierList),
  message_category: Type.Optional(MessageCategory),
  message_codes: Type.Optional(IdentifierList)
}, { additionalProperties: false })

export type EventStreamQuerystring = Static<typeof EventStreamQuerystring>

/** At most one of these may be given on the stream. */
export const exclusiveStreamFilters = ['message_category', 'message_codes'] as const
