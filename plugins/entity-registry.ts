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
    /**
     * Loads ENTITIES_FILE again if its last load was refused (a check of checkReloadedEntities
     * may pass now): what a change that the check depends on calls.
     */
    retryRefusedEntities (): void
    /** Calls `listener` with each registry that replaces the current one. */
    onEntitiesReloaded (listener: (registry: EntityRegistry) => void): void
    /**
     * Runs `check` on each reloaded registry before it replaces the current one: a check that
     * throws keeps the current one in service, its message logged as the reload's failure.
     */
    checkReloadedEntities (check: (registry: EntityRegistry) => Promise<void>): void
  }
}

export interface EntityRegistryOptions {
  entitiesFile: string
}

/** The devices, spaces and tags of ENTITIES_FILE; both stores rely on it. */
export default fp<EntityRegistryOptions>(async function entityRegistry (fastify, options) {
  const counts = (registry: EntityRegistry) => ({ devices: registry.deviceCount, spaces: registry.spaceCount })
  const listeners: Array<(registry: EntityRegistry) => void> = []
  const checks: Array<(registry: EntityRegistry) => Promise<void>> = []
  const load = async (file: string) => {
    const loaded = await loadEntityRegistry(file)
    for (const check of checks) await check(loaded)
    return loaded
  }
  const registry = await reloadableFile(options.entitiesFile, load, counts, fastify.log, (reloaded) => {
    for (const listener of listeners) listener(reloaded)
  })
  fastify.addHook('onClose', async () => { registry.close() })
  fastify.decorate('entityRegistry', { getter: () => registry.current })
  fastify.decorate('reloadEntities', () => registry.reload())
  fastify.decorate('retryRefusedEntities', () => { registry.retryIfRefused() })
  fastify.decorate('onEntitiesReloaded', (listener: (reloaded: EntityRegistry) => void) => { listeners.push(listener) })
  fastify.decorate('checkReloadedEntities', (check: (reloaded: EntityRegistry) => Promise<void>) => { checks.push(check) })
  fastify.log.info({ file: options.entitiesFile, ...counts(registry.current) }, 'entities loaded')
}, { name: 'entity-registry', fastify: '5.x' })
