import { Type, type Static } from '@sinclair/typebox'
import { identifierList } from './identifier.js'
import { Message, MessageCategory } from './message.js'

const DATE_TIME = 'an RFC 3339 date-time with Z or an offset (a + may arrive as a space)'
const listOf = (what: string) => `a comma separated list of ${what} (items trimmed, blank ones and repeats ignored; none at all is 400 invalid_parameter)`
const DEVICE_IDS = `${listOf('device IDs')}: their events, with those of space_ids and tag_ids (the union). An unknown device is an item error (invalid_device), not a failure`
const SPACE_IDS = `${listOf('space IDs')}: their events, including those of devices while they were in them. An unknown space is an item error (invalid_space)`
const TAG_IDS = `${listOf('tag IDs')}: the events of each tag's devices and spaces. An unknown tag is an item error (invalid_tag)`
const categoryOf = (exclusive: string) => `alert or notification: only events of this category. At most one of ${exclusive}`
const codesOf = (exclusive: string) => `${listOf('message codes')}: only events with these codes (unknown codes match nothing). At most one of ${exclusive}`

/** Dates stay plain strings here: their rules (403, after the 400s) run in the date-range hook. */
export const EventsQuerystring = Type.Object({
  start_date: Type.String({ description: `The start of the window (inclusive): ${DATE_TIME}, earlier than now. Required (400 missing_parameter); a bad one is 403 invalid_start_date` }),
  end_date: Type.Optional(Type.String({ description: `The end of the window (exclusive): ${DATE_TIME}, after start_date and earlier than now; now when absent. A bad one is 403 invalid_end_date` })),
  device_ids: Type.Optional(identifierList(DEVICE_IDS)),
  space_ids: Type.Optional(identifierList(SPACE_IDS)),
  tag_ids: Type.Optional(identifierList(TAG_IDS)),
  message_ids: Type.Optional(identifierList(`${listOf('message IDs')}: only these events (unknown IDs match nothing). At most one of message_ids, message_category and message_codes`)),
  message_category: Type.Optional(Type.Union(MessageCategory.anyOf, { description: categoryOf('message_ids, message_category and message_codes') })),
  message_codes: Type.Optional(identifierList(codesOf('message_ids, message_category and message_codes')))
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
  id: Type.String({ description: 'the ID as the request gave it' }),
  item_type: Type.Union((Object.keys(ItemType) as ItemTypeName[]).map((type) => Type.Literal(type)), { description: 'what the ID was given as' }),
  message: Type.Union(Object.values(ItemType).map((message) => Type.Literal(message)), { description: 'the item error code of that type' })
}, { $id: 'ItemError', additionalProperties: false, description: 'An ID of the request that the provider does not know: reported, the answer is still 200' })

export type ItemError = Static<typeof ItemError>

export const EventsResponse = Type.Object({
  data: Type.Array(Message, { description: 'the events, by date_time ascending, then message_id' }),
  errors: Type.Array(ItemError, { description: 'unknown devices, then spaces, then tags, each in the order given' })
}, { additionalProperties: false })

export type EventsResponse = Static<typeof EventsResponse>

/**
 * The stream's parameters: the events endpoint's, without message_ids (it makes no sense live:
 * 400 invalid_parameter, as any unknown name) and end_date, and with start_date optional.
 */
export const EventStreamQuerystring = Type.Object({
  start_date: Type.Optional(Type.String({ description: `Replay the stored events from this date-time (${DATE_TIME}, earlier than now; a bad one is 403 invalid_start_date) before going live. Last-Event-ID takes precedence` })),
  device_ids: Type.Optional(identifierList(DEVICE_IDS)),
  space_ids: Type.Optional(identifierList(SPACE_IDS)),
  tag_ids: Type.Optional(identifierList(TAG_IDS)),
  message_category: Type.Optional(Type.Union(MessageCategory.anyOf, { description: categoryOf('message_category and message_codes') })),
  message_codes: Type.Optional(identifierList(codesOf('message_category and message_codes')))
}, { additionalProperties: false })

export type EventStreamQuerystring = Static<typeof EventStreamQuerystring>

/** At most one of these may be given on the stream. */
export const exclusiveStreamFilters = ['message_category', 'message_codes'] as const
