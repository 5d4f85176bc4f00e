import { hash } from 'node:crypto'
import type { ItemError } from '../../schemas/events.js'
import type { EntityRegistry, RegistryChanges } from '../registry/entity-registry.js'
import type { TokenScope } from '../../schemas/tokens.js'
import { WeakInterned } from './weak-interned.js'

/**
 * What a stream named that a reloaded registry can give another meaning: its tags (whose members
 * change), and the devices and spaces it named that the registry did not know when it opened
 * (which a reload can add). Its filter was resolved then, once; such a stream is ended when a
 * reload touches one of these, and its client, reconnecting with Last-Event-ID, is resolved
 * afresh and resumes with every event accepted since (plugins/live-events.ts).
 */
export interface AskedEntities {
  tagIds: readonly string[]
  unknownDeviceIds: readonly string[]
  unknownSpaceIds: readonly string[]
}

/** What a stream asked for, from its tag_ids and its item errors; undefined when nothing of it can change. */
export function askedEntities (tagIds: readonly string[] | undefined, errors: readonly ItemError[]): AskedEntities | undefined {
  const unknownDeviceIds = errors.filter(({ item_type: type }) => type === 'device').map(({ id }) => id)
  const unknownSpaceIds = errors.filter(({ item_type: type }) => type === 'space').map(({ id }) => id)
  if ((tagIds === undefined || tagIds.length === 0) && unknownDeviceIds.length === 0 && unknownSpaceIds.length === 0) return undefined
  const asked = { tagIds: tagIds ?? [], unknownDeviceIds, unknownSpaceIds }
  // Kept while its stream is open, and up to a URL's worth of IDs: streams that ask the same share one.
  return held.intern(hash('sha256', JSON.stringify(asked), 'base64'), asked)
}

const held = new WeakInterned<AskedEntities>()

/** Whether a stream's token sees an entity (in the reloaded registry, or for a tag in either): a scoped token's. */
export type SeesEntity = (kind: 'device' | 'space' | 'tag', id: string) => boolean

/**
 * Whether a reload's changes give what the stream asked for another meaning. A scoped token's
 * stream counts only what its token sees (`sees`): one it cannot see is answered as unknown
 * before and after, and ending its stream would tell its consumer that another's entity exists
 * or changed (a review's finding).
 */
export function askedOtherwise ({ tagIds, unknownDeviceIds, unknownSpaceIds }: AskedEntities, changes: RegistryChanges, sees: SeesEntity = () => true): boolean {
  return tagIds.some((id) => changes.tagIds.has(id) && sees('tag', id)) ||
    unknownDeviceIds.some((id) => changes.addedDeviceIds.has(id) && sees('device', id)) ||
    unknownSpaceIds.some((id) => changes.addedSpaceIds.has(id) && sees('space', id))
}

/**
 * What each scope sees of a reload's changes (SeesEntity): an ID in the reloaded registry, a tag
 * in either registry. Asked once per scope and ID during one reload (tokens share their scope).
 */
export function scopeSight (registry: EntityRegistry, before: EntityRegistry): (scope: TokenScope) => SeesEntity {
  const seen = new Map<TokenScope, Map<string, boolean>>()
  return (scope) => (kind, id) => {
    let ofScope = seen.get(scope)
    if (ofScope === undefined) seen.set(scope, ofScope = new Map())
    const key = `${kind}:${id}`
    let sees = ofScope.get(key)
    if (sees === undefined) {
      const request = kind === 'device' ? { deviceIds: [id] } : kind === 'space' ? { spaceIds: [id] } : { tagIds: [id] }
      sees = registry.resolve(request, scope).errors.length === 0 || (kind === 'tag' && before.resolve(request, scope).errors.length === 0)
      ofScope.set(key, sees)
    }
    return sees
  }
}
