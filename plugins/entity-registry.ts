import fp from 'fastify-plugin'
import { reloadableFile } from '../src/data/reloadable-file.js'
import type { EntityRegistry } from '../src/registry/entity-registry.js'
import { loadEntityRegistry } from '../src/registry/load-entities.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The registry of the moment: reloaded whole on SIGHUP and when ENTITIES_FILE changes. */
    entityRegistry: EntityRegistry
    /** Loads ENTITIES_FILE again now (what SIGHUP does). */
    reloadEntities (): Promise<void>
    /** Calls `listener` with each registry that replaces the current one. */
    onEntitiesReloaded (listener: (registry: EntityRegistry) => void): void
  }
}

export interface EntityRegistryOptions {
  entitiesFile: string
}

/** The devices, spaces and tags of ENTITIES_FILE; both stores rely on it. */
export default fp<EntityRegistryOptions>(async function entityRegistry (fastify, options) {
  const counts = (registry: EntityRegistry) => ({ devices: registry.deviceCount, spaces: registry.spaceCount })
  const listeners: Array<(registry: EntityRegistry) => void> = []
  const registry = await reloadableFile(options.entitiesFile, loadEntityRegistry, counts, fastify.log, (reloaded) => {
    for (const listener of listeners) listener(reloaded)
  })
  fastify.addHook('onClose', async () => { registry.close() })
  fastify.decorate('entityRegistry', { getter: () => registry.current })
  fastify.decorate('reloadEntities', () => registry.reload())
  fastify.decorate('onEntitiesReloaded', (listener: (reloaded: EntityRegistry) => void) => { listeners.push(listener) })
  fastify.log.info({ file: options.entitiesFile, ...counts(registry.current) }, 'entities loaded')
}, { name: 'entity-registry', fastify: '5.x' })
