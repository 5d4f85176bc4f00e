import { SpecificationsFile } from '../../schemas/specifications.js'
import { DataFileError } from '../data/data-file-error.js'
import { readCheckedJsonFile } from '../data/read-json-file.js'
import { compileSchemaCheck } from '../data/schema-check.js'
import { ENGLISH, SpecificationCatalog } from './specification-catalog.js'

const specificationsCheck = compileSchemaCheck(SpecificationsFile)

/** Loads and checks SPECIFICATIONS_FILE: its schema, one entry per code, English in each, one detail per language. */
export async function loadSpecificationCatalog (file: string): Promise<SpecificationCatalog> {
  const specifications = await readCheckedJsonFile(file, specificationsCheck)
  const codes = new Map<string, number>()
  specifications.forEach((specification, index) => {
    const first = codes.get(specification.message_code)
    if (first !== undefined) {
      throw new DataFileError(file, `entry [${index}].message_code`, `${JSON.stringify(specification.message_code)} is already described by entry [${first}]`)
    }
    codes.set(specification.message_code, index)
    const languages = new Set<string>()
    specification.details.forEach((detail, position) => {
      if (languages.has(detail.language)) {
        throw new DataFileError(file, `entry [${index}].details[${position}].language`, `${JSON.stringify(detail.language)} is given twice`)
      }
      languages.add(detail.language)
    })
    if (!languages.has(ENGLISH)) throw new DataFileError(file, `entry [${index}].details`, `no "${ENGLISH}" (English) detail; English is always served`)
  })
  return new SpecificationCatalog(specifications)
}
