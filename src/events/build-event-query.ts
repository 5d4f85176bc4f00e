import type { EventsQuerystring, ItemError } from '../../schemas/events.js'
import type { TokenScope } from '../../schemas/tokens.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import type { EventQuery } from '../store/event-store.js'
import type { DateRange } from '../time/date-range.js'
import { splitList } from '../http/list-parameter.js'

export interface PlannedEventQuery {
  query: EventQuery
  errors: ItemError[]
}

/** Turns a checked events request into a store query: lists split, tags resolved, unknown IDs reported. */
export function buildEventQuery (parameters: EventsQuerystring, range: DateRange, registry: EntityRegistry, scope?: TokenScope): PlannedEventQuery {
  const { selection, errors, visible } = registry.resolve({
    deviceIds: splitList(parameters.device_ids),
    spaceIds: splitList(parameters.space_ids),
    tagIds: splitList(parameters.tag_ids)
  }, scope)
  const messageIds = splitList(parameters.message_ids)
  const messageCodes = splitList(parameters.message_codes)
  return {
    query: {
      startMs: range.startMs,
      endMs: range.endMs,
      entities: selection,
      scope: visible,
      messageIds: messageIds && new Set(messageIds),
      category: parameters.message_category,
      messageCodes: messageCodes && new Set(messageCodes)
    },
    errors
  }
}
