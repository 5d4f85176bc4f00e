import fp from 'fastify-plugin'
import { reloadableFile, type ReloadableFile } from '../src/data/reloadable-file.js'
import type { SpecificationCatalog } from '../src/specifications/specification-catalog.js'
import { loadSpecificationCatalog } from '../src/specifications/load-specifications.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * undefined when SPECIFICATIONS_FILE=none: the endpoint is not implemented. Otherwise the
     * catalog of the moment, reloaded whole on SIGHUP and when the file changes.
     */
    specificationCatalog: SpecificationCatalog | undefined
  }
}

export interface SpecificationsOptions {
  specificationsFile: string | undefined
}

export default fp<SpecificationsOptions>(async function specifications (fastify, options) {
  const file = options.specificationsFile
  let catalog: ReloadableFile<SpecificationCatalog> | undefined
  if (file !== undefined) {
    catalog = await reloadableFile(file, loadSpecificationCatalog, (loaded) => ({ codes: loaded.codeCount }), fastify.log)
    fastify.addHook('onClose', async () => { catalog?.close() })
    fastify.log.info({ file, codes: catalog.current.codeCount }, 'specifications loaded')
  }
  fastify.decorate('specificationCatalog', { getter: () => catalog?.current })
}, { name: 'specifications', fastify: '5.x' })
