import fp from 'fastify-plugin'
import type { EntityRegistry } from '../src/registry/entity-registry.js'
import { loadEntityRegistry } from '../src/registry/load-entities.js'

declare module 'fastify' {
  interface FastifyInstance {
    entityRegistry: EntityRegistry
  }
}

export interface EntityRegistryOptions {
  entitiesFile: string
}

/** The devices, spaces and tags of ENTITIES_FILE; both stores rely on it. */
export default fp<EntityRegistryOptions>(async function entityRegistry (fastify, options) {
  const registry = await loadEntityRegistry(options.entitiesFile)
  fastify.decorate('entityRegistry', registry)
  fastify.log.info({ file: options.entitiesFile, devices: registry.deviceCount, spaces: registry.spaceCount }, 'entities loaded')
}, { name: 'entity-registry', fastify: '5.x' })
