import fp from 'fastify-plugin'
import type { SpecificationCatalog } from '../src/specifications/specification-catalog.js'
import { loadSpecificationCatalog } from '../src/specifications/load-specifications.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** undefined when SPECIFICATIONS_FILE=none: the endpoint is not implemented. */
    specificationCatalog: SpecificationCatalog | undefined
  }
}

export interface SpecificationsOptions {
  specificationsFile: string | undefined
}

export default fp<SpecificationsOptions>(async function specifications (fastify, options) {
  const file = options.specificationsFile
  const catalog = file === undefined ? undefined : await loadSpecificationCatalog(file)
  fastify.decorate('specificationCatalog', catalog)
  if (file !== undefined) fastify.log.info({ file }, 'specifications loaded')
}, { name: 'specifications', fastify: '5.x' })
