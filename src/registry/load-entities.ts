import { EntitiesFile } from '../../schemas/entities.js'
import { DataFileError } from '../data/data-file-error.js'
import { readCheckedJsonFile } from '../data/read-json-file.js'
import { compileSchemaCheck } from '../data/schema-check.js'
import { EntityRegistry } from './entity-registry.js'

const entitiesCheck = compileSchemaCheck(EntitiesFile)

/** Loads and checks ENTITIES_FILE: its schema, unique IDs, and that every reference points at a known entity. */
export async function loadEntityRegistry (file: string): Promise<EntityRegistry> {
  const entities = await readCheckedJsonFile(file, entitiesCheck)
  const unique = (kind: 'devices' | 'spaces' | 'tags') => {
    const seen = new Map<string, number>()
    entities[kind].forEach((entry, index) => {
      const first = seen.get(entry.id)
      if (first !== undefined) throw new DataFileError(file, `entry ${kind}[${index}].id`, `${JSON.stringify(entry.id)} is already used by ${kind}[${first}]`)
      seen.set(entry.id, index)
    })
    return seen
  }
  const spaces = unique('spaces')
  const devices = unique('devices')
  unique('tags')
  entities.devices.forEach((device, index) => {
    if (!spaces.has(device.space_id)) throw new DataFileError(file, `entry devices[${index}].space_id`, `unknown space ${JSON.stringify(device.space_id)}`)
  })
  entities.tags.forEach((tag, index) => {
    tag.device_ids.forEach((id, member) => {
      if (!devices.has(id)) throw new DataFileError(file, `entry tags[${index}].device_ids[${member}]`, `unknown device ${JSON.stringify(id)}`)
    })
    tag.space_ids.forEach((id, member) => {
      if (!spaces.has(id)) throw new DataFileError(file, `entry tags[${index}].space_ids[${member}]`, `unknown space ${JSON.stringify(id)}`)
    })
  })
  return new EntityRegistry(entities)
}
