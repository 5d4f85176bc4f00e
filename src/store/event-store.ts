import type { Message, MessageCategory } from '../../schemas/message.js'
import type { EntitySelection } from '../registry/entity-registry.js'

/** What the events endpoint asks a store, after every rule has been checked and every tag resolved. */
export interface EventQuery {
  /** The window: startMs <= date_time < endMs. */
  startMs: number
  endMs: number
  /** undefined: every known entity. Otherwise events of these devices, or that happened in these spaces. */
  entities: EntitySelection | undefined
  messageIds?: ReadonlySet<string> | undefined
  category?: MessageCategory | undefined
  messageCodes?: ReadonlySet<string> | undefined
}

export interface StoreHealth {
  ready: boolean
  /** Why it is not ready, for operators. */
  reason?: string
}

/**
 * The one interface between the HTTP layer and a store. A store answers only events of entities
 * the registry knows, in date_time then message_id order, in batches as they become available.
 */
export interface EventStore {
  readonly kind: string
  queryEvents (query: EventQuery): AsyncIterable<Message[]>
  health (): Promise<StoreHealth>
  close (): Promise<void>
}

/** The store cannot answer now (unreachable, too slow, failing); the provider answers 503. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}

/** The order every store answers in. */
export function compareEvents (aMs: number, aId: string, bMs: number, bId: string): number {
  if (aMs !== bMs) return aMs - bMs
  return aId < bId ? -1 : aId > bId ? 1 : 0
}

/** Whether one event answers the query's entity and exclusive filters (the window is the caller's). */
export function matchesFilters (query: EventQuery, message: Message): boolean {
  const { entities, messageIds, category, messageCodes } = query
  if (entities !== undefined &&
    !(message.device_id !== undefined && entities.deviceIds.has(message.device_id)) &&
    !(message.space_id !== undefined && entities.spaceIds.has(message.space_id))) return false
  if (messageIds !== undefined && !messageIds.has(message.message_id)) return false
  if (category !== undefined && message.message_category !== category) return false
  if (messageCodes !== undefined && !messageCodes.has(message.message_code)) return false
  return true
}
