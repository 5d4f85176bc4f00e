import type { EntitiesFile } from '../../schemas/entities.js'
import type { ItemError } from '../../schemas/events.js'
import type { Message } from '../../schemas/message.js'
import { intern } from '../data/intern.js'
import type { EntitySelection } from '../store/event-store.js'

export interface EntityRequest {
  deviceIds?: readonly string[] | undefined
  spaceIds?: readonly string[] | undefined
  tagIds?: readonly string[] | undefined
}

export interface ResolvedEntities {
  /** undefined: no entity was asked for, so every known entity is selected. */
  selection: EntitySelection | undefined
  errors: ItemError[]
}

/** The devices, spaces and tags the provider knows, and how tags expand into them. */
export class EntityRegistry {
  readonly #deviceSpace = new Map<string, string>()
  readonly #spaces = new Set<string>()
  readonly #tags = new Map<string, { deviceIds: readonly string[], spaceIds: readonly string[] }>()

  constructor (entities: EntitiesFile) {
    // The same string objects as the events' (see intern.ts): lookups compare pointers.
    for (const space of entities.spaces) this.#spaces.add(intern(space.id))
    for (const device of entities.devices) this.#deviceSpace.set(intern(device.id), intern(device.space_id))
    for (const tag of entities.tags) this.#tags.set(tag.id, { deviceIds: tag.device_ids, spaceIds: tag.space_ids })
  }

  get deviceCount (): number { return this.#deviceSpace.size }
  get spaceCount (): number { return this.#spaces.size }

  /** An event is served only when the entity it belongs to is known: its device, or for a space event its space. */
  knowsEntityOf (event: Pick<Message, 'device_id' | 'space_id'>): boolean {
    return event.device_id !== undefined
      ? this.#deviceSpace.has(event.device_id)
      : event.space_id !== undefined && this.#spaces.has(event.space_id)
  }

  /** Unions the listed devices, spaces and the members of the listed tags; unknown IDs become item errors, in the order asked. */
  resolve (request: EntityRequest): ResolvedEntities {
    const { deviceIds, spaceIds, tagIds } = request
    if (deviceIds === undefined && spaceIds === undefined && tagIds === undefined) {
      return { selection: undefined, errors: [] }
    }
    const devices = new Set<string>()
    const spaces = new Set<string>()
    const errors: ItemError[] = []
    for (const id of deviceIds ?? []) {
      if (this.#deviceSpace.has(id)) devices.add(id)
      else errors.push({ id, item_type: 'device', message: 'invalid_device' })
    }
    for (const id of spaceIds ?? []) {
      if (this.#spaces.has(id)) spaces.add(id)
      else errors.push({ id, item_type: 'space', message: 'invalid_space' })
    }
    for (const id of tagIds ?? []) {
      const tag = this.#tags.get(id)
      if (tag === undefined) {
        errors.push({ id, item_type: 'tag', message: 'invalid_tag' })
        continue
      }
      for (const device of tag.deviceIds) devices.add(device)
      for (const space of tag.spaceIds) spaces.add(space)
    }
    return { selection: { deviceIds: devices, spaceIds: spaces }, errors }
  }
}
