import type { EventsQuerystring, ItemError } from '../../schemas/events.js'
import type { DateRange } from '../../plugins/query-rules.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import type { EventQuery } from '../store/event-store.js'
import { splitList } from '../http/list-parameter.js'

export interface PlannedEventQuery {
  /** undefined when nothing can match (every entity asked for is unknown): the store is not asked. */
  query: EventQuery | undefined
  errors: ItemError[]
}

/** Turns a checked events request into a store query: lists split, tags resolved, unknown IDs reported. */
export function buildEventQuery (parameters: EventsQuerystring, range: DateRange, registry: EntityRegistry): PlannedEventQuery {
  const { selection, errors } = registry.resolve({
    deviceIds: splitList(parameters.device_ids),
    spaceIds: splitList(parameters.space_ids),
    tagIds: splitList(parameters.tag_ids)
  })
  if (selection !== undefined && selection.deviceIds.size === 0 && selection.spaceIds.size === 0) {
    return { query: undefined, errors }
  }
  const messageIds = splitList(parameters.message_ids)
  const messageCodes = splitList(parameters.message_codes)
  return {
    query: {
      startMs: range.startMs,
      endMs: range.endMs,
      entities: selection,
      messageIds: messageIds && new Set(messageIds),
      category: parameters.message_category,
      messageCodes: messageCodes && new Set(messageCodes)
    },
    errors
  }
}
