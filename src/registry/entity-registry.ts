import type { EntitiesFile } from '../../schemas/entities.js'
import type { ItemError } from '../../schemas/events.js'
import type { Message } from '../../schemas/message.js'
import type { TokenScope } from '../../schemas/tokens.js'
import { EntityNumberSet } from '../data/entity-numbers.js'
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
  /** A scoped token's visible entities, for the query's scope filter; undefined: unscoped. */
  visible: EntitySelection | undefined
}

/** What a reloaded registry changed that an open stream's filter depends on (src/live/asked-entities.ts). */
export interface RegistryChanges {
  /** Tags added, removed, or with other members. */
  tagIds: ReadonlySet<string>
  /** Devices and spaces known now that were not before. */
  addedDeviceIds: ReadonlySet<string>
  addedSpaceIds: ReadonlySet<string>
}

/** The devices and spaces a registry knows, by number. */
export interface KnownNumbers {
  devices: EntityNumberSet
  spaces: EntityNumberSet
}

/** The devices, spaces and tags the provider knows, and how tags expand into them. */
export class EntityRegistry {
  readonly #deviceSpace = new Map<string, string>()
  readonly #spaces = new Set<string>()
  readonly #tags = new Map<string, { deviceIds: readonly string[], spaceIds: readonly string[] }>()
  /** Scopes resolved against this registry (a reloaded registry resolves them afresh). */
  readonly #visible = new WeakMap<TokenScope, EntitySelection>()
  #known: KnownNumbers | undefined

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

  /** Whether the registry has this space (a device's event may name another space than its registry one, but one of these). */
  knowsSpace (spaceId: string | undefined): boolean {
    return spaceId !== undefined && this.#spaces.has(spaceId)
  }

  /** The devices whose registry space is not what it was in `before` (added and removed ones too), with their spaces then and now. */
  movedSince (before: EntityRegistry): Array<{ device: string, then: string | undefined, now: string | undefined }> {
    const moved: Array<{ device: string, then: string | undefined, now: string | undefined }> = []
    for (const [device, now] of this.#deviceSpace) {
      const then = before.#deviceSpace.get(device)
      if (then !== now) moved.push({ device, then, now })
    }
    for (const [device, then] of before.#deviceSpace) if (!this.#deviceSpace.has(device)) moved.push({ device, then, now: undefined })
    return moved
  }

  /** What this registry changed from `before`: tags and added devices and spaces (RegistryChanges). */
  changesSince (before: EntityRegistry): RegistryChanges {
    const tagIds = new Set<string>()
    for (const [id, tag] of this.#tags) {
      const then = before.#tags.get(id)
      if (then === undefined || !sameMembers(tag.deviceIds, then.deviceIds) || !sameMembers(tag.spaceIds, then.spaceIds)) tagIds.add(id)
    }
    for (const id of before.#tags.keys()) if (!this.#tags.has(id)) tagIds.add(id)
    const addedDeviceIds = new Set<string>()
    for (const id of this.#deviceSpace.keys()) if (!before.#deviceSpace.has(id)) addedDeviceIds.add(id)
    const addedSpaceIds = new Set<string>()
    for (const id of this.#spaces) if (!before.#spaces.has(id)) addedSpaceIds.add(id)
    return { tagIds, addedDeviceIds, addedSpaceIds }
  }

  /** The same rule by number (src/data/entity-numbers.ts): the known devices and spaces. */
  knownNumbers (): KnownNumbers {
    this.#known ??= { devices: new EntityNumberSet(this.#deviceSpace.keys()), spaces: new EntityNumberSet(this.#spaces) }
    return this.#known
  }

  /**
   * What a scope lets its token see: its devices and spaces, and those of its tags. An event is
   * visible when its device or its space is. IDs this registry does not know are left out.
   */
  visibleOf (scope: TokenScope): EntitySelection {
    let visible = this.#visible.get(scope)
    if (visible !== undefined) return visible
    const deviceIds = new Set<string>()
    const spaceIds = new Set<string>()
    for (const id of scope.device_ids ?? []) if (this.#deviceSpace.has(id)) deviceIds.add(intern(id))
    for (const id of scope.space_ids ?? []) if (this.#spaces.has(id)) spaceIds.add(intern(id))
    for (const id of scope.tag_ids ?? []) {
      const tag = this.#tags.get(id)
      for (const device of tag?.deviceIds ?? []) deviceIds.add(intern(device))
      for (const space of tag?.spaceIds ?? []) spaceIds.add(intern(space))
    }
    visible = { deviceIds, spaceIds }
    this.#visible.set(scope, visible)
    return visible
  }

  /**
   * Why a scoped token may not write this event, or undefined when it may. Its device (or a space
   * event's space) outside the scope is answered exactly as one this registry does not know. A
   * device event placed in a space that is neither the device's own nor in the scope is refused
   * whether that space exists or not: written, it would show in that space's answers to whoever
   * sees it.
   */
  scopeRefusal (event: Pick<Message, 'device_id' | 'space_id'>, scope: TokenScope): string | undefined {
    const visible = this.visibleOf(scope)
    const { device_id: deviceId, space_id: spaceId } = event
    if (deviceId !== undefined) {
      const home = this.#deviceSpace.get(deviceId)
      if (!visible.deviceIds.has(deviceId) && (home === undefined || !visible.spaceIds.has(home))) return `device ${JSON.stringify(deviceId)} is not in the entities file`
      if (spaceId !== undefined && spaceId !== home && !visible.spaceIds.has(spaceId)) return `space ${JSON.stringify(spaceId)} is neither the device's space nor in this token's scope`
      return undefined
    }
    if (spaceId === undefined || !visible.spaceIds.has(spaceId)) return `space ${JSON.stringify(spaceId)} is not in the entities file`
    return undefined
  }

  /** The IDs a scope names that this registry does not know, as `kind "id"`. */
  unknownIn (scope: TokenScope): string[] {
    return [
      ...(scope.device_ids ?? []).filter((id) => !this.#deviceSpace.has(id)).map((id) => `device ${JSON.stringify(id)}`),
      ...(scope.space_ids ?? []).filter((id) => !this.#spaces.has(id)).map((id) => `space ${JSON.stringify(id)}`),
      ...(scope.tag_ids ?? []).filter((id) => !this.#tags.has(id)).map((id) => `tag ${JSON.stringify(id)}`)
    ]
  }

  /**
   * Unions the listed devices, spaces and the members of the listed tags; unknown IDs become item
   * errors, in the order asked. With a scope, IDs outside it are answered exactly as unknown ones
   * (a consumer cannot learn what others have): a device is in it when it or its space is, a
   * space when it is, a tag when the scope names it or every member of it is in it; and no
   * entity asked for selects everything in it.
   */
  resolve (request: EntityRequest, scope?: TokenScope): ResolvedEntities {
    const visible = scope === undefined ? undefined : this.visibleOf(scope)
    const resolved = this.#resolve(request, visible, scope)
    if (visible !== undefined && resolved.selection === undefined) resolved.selection = visible
    return resolved
  }

  /** A device is visible when it or its space is in the scope's selection (always, unscoped). */
  #seesDevice (visible: EntitySelection | undefined, id: string): boolean {
    return visible === undefined || visible.deviceIds.has(id) || visible.spaceIds.has(this.#deviceSpace.get(id)!)
  }

  /**
   * A tag is visible when the scope names it, or when every member is visible. A tag without
   * members is in no scope but the one that names it (else any scoped token would learn that it
   * exists).
   */
  #seesTag (visible: EntitySelection | undefined, scope: TokenScope | undefined, id: string, tag: { deviceIds: readonly string[], spaceIds: readonly string[] }): boolean {
    if (visible === undefined || (scope?.tag_ids?.includes(id) ?? false)) return true
    if (tag.deviceIds.length + tag.spaceIds.length === 0) return false
    for (const device of tag.deviceIds) if (!this.#seesDevice(visible, device)) return false
    for (const space of tag.spaceIds) if (!visible.spaceIds.has(space)) return false
    return true
  }

  // Methods rather than closures: this runs for every events request, and three closures made
  // per call were most of its allocation.
  #resolve (request: EntityRequest, visible: EntitySelection | undefined, scope: TokenScope | undefined): ResolvedEntities {
    const { deviceIds, spaceIds, tagIds } = request
    if (deviceIds === undefined && spaceIds === undefined && tagIds === undefined) {
      return { selection: undefined, errors: [], visible }
    }
    const devices = new Set<string>()
    const spaces = new Set<string>()
    const errors: ItemError[] = []
    for (const id of deviceIds ?? []) {
      // The registry's own string object (interned): the store's lookups that follow compare pointers.
      if (this.#deviceSpace.has(id) && this.#seesDevice(visible, id)) devices.add(intern(id))
      else errors.push({ id, item_type: 'device', message: 'invalid_device' })
    }
    for (const id of spaceIds ?? []) {
      if (this.#spaces.has(id) && (visible === undefined || visible.spaceIds.has(id))) spaces.add(intern(id))
      else errors.push({ id, item_type: 'space', message: 'invalid_space' })
    }
    for (const id of tagIds ?? []) {
      const tag = this.#tags.get(id)
      if (tag === undefined || !this.#seesTag(visible, scope, id, tag)) {
        errors.push({ id, item_type: 'tag', message: 'invalid_tag' })
        continue
      }
      for (const device of tag.deviceIds) devices.add(device)
      for (const space of tag.spaceIds) spaces.add(space)
    }
    return { selection: { deviceIds: devices, spaceIds: spaces }, errors, visible }
  }
}

/** Whether two lists hold the same members, in any order. */
function sameMembers (a: readonly string[], b: readonly string[]): boolean {
  const members = new Set(a)
  const others = new Set(b)
  if (members.size !== others.size) return false
  for (const member of others) if (!members.has(member)) return false
  return true
}
