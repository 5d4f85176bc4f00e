import { EntitiesFile } from '../../schemas/entities.js'
import { SpecificationsFile } from '../../schemas/specifications.js'
import { readCheckedJsonFile } from '../data/read-json-file.js'
import { compileSchemaCheck } from '../data/schema-check.js'
import { loadEntityRegistry } from '../registry/load-entities.js'
import { loadSpecificationCatalog } from '../specifications/load-specifications.js'
import { BASE_CODE_COUNT, buildCatalog, type MessageCatalog } from './catalog.js'
import { catalogOf } from './live-events.js'

const entitiesCheck = compileSchemaCheck(EntitiesFile)
const specificationsCheck = compileSchemaCheck(SpecificationsFile)

export interface SimulationInputs {
  entities: EntitiesFile
  catalog: MessageCatalog
}

/**
 * Reads the entities file and the specifications file (undefined: the hand-written catalog of
 * the demo data) with the provider's own checks, so a file the provider would refuse is refused
 * here too, with the same message (a DataFileError naming the file and the entry).
 */
export async function loadSimulationInputs (entitiesFile: string, specificationsFile: string | undefined): Promise<SimulationInputs> {
  // The provider's loaders check references and duplicates but keep only their indexes; the
  // lists themselves are read again through the same schema.
  await loadEntityRegistry(entitiesFile)
  const entities = await readCheckedJsonFile(entitiesFile, entitiesCheck)
  if (specificationsFile === undefined) return { entities, catalog: buildCatalog(BASE_CODE_COUNT) }
  await loadSpecificationCatalog(specificationsFile)
  return { entities, catalog: catalogOf(await readCheckedJsonFile(specificationsFile, specificationsCheck)) }
}
