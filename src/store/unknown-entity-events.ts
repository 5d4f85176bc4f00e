import type { Message } from '../../schemas/message.js'
import type { EventStore } from './event-store.js'
import type { StoreLog } from './store-descriptor.js'

/** What decides whether an event is served (the entity registry's knowsEntityOf). */
export interface EntityKnowledge {
  knowsEntityOf (event: Pick<Message, 'device_id' | 'space_id'>): boolean
}

/** Stored events of entities the registry does not know: kept by the store, never served. */
export interface UnknownEntityEvents {
  /** How many such events. */
  events: number
  /** How many distinct unknown devices (device events) and spaces (space events) they belong to. */
  devices: number
  spaces: number
  /** The first few of those devices and spaces, in the store's order. */
  exampleDeviceIds: string[]
  exampleSpaceIds: string[]
}

/** How many examples of each kind the count keeps. */
export const UNKNOWN_ENTITY_EXAMPLES = 5

/**
 * Counts the events whose entity the registry does not know: a device event by its device, a
 * space event by its space (as the registry decides what is served).
 */
export function countUnknownEntityEvents (messages: Iterable<Pick<Message, 'device_id' | 'space_id'>>, registry: EntityKnowledge, examples = UNKNOWN_ENTITY_EXAMPLES): UnknownEntityEvents {
  let events = 0
  const devices = new Set<string>()
  const spaces = new Set<string>()
  for (const message of messages) {
    if (registry.knowsEntityOf(message)) continue
    events++
    if (message.device_id !== undefined) devices.add(message.device_id)
    else if (message.space_id !== undefined) spaces.add(message.space_id)
  }
  return {
    events,
    devices: devices.size,
    spaces: spaces.size,
    exampleDeviceIds: [...devices].slice(0, examples),
    exampleSpaceIds: [...spaces].slice(0, examples)
  }
}

/**
 * Once, when the provider starts: warns how many of the store's events belong to devices or
 * spaces the registry does not know, with a few of them. Such events are kept (a registry that
 * lists them later serves them) but not served until then, so an events file that does not match
 * ENTITIES_FILE shows here rather than as answers with fewer events. Only a store that holds its
 * events (the memory store: `storedEntities`) can be counted; for the others this does nothing.
 * Returns the count (undefined when the store cannot be counted).
 */
export function warnOfUnknownEntityEvents (store: EventStore, registry: EntityKnowledge, log: StoreLog): UnknownEntityEvents | undefined {
  if (store.storedEntities === undefined) return undefined
  const unknown = countUnknownEntityEvents(store.storedEntities(), registry)
  if (unknown.events > 0) {
    log.warn(unknown, `${unknown.events} stored events belong to devices or spaces the registry (ENTITIES_FILE) does not know: ` +
      'they are kept but not served until the registry lists them')
  }
  return unknown
}
