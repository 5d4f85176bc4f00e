import { TokensFile } from '../../schemas/tokens.js'
import { DataFileError } from '../data/data-file-error.js'
import { readCheckedJsonFile } from '../data/read-json-file.js'
import { compileSchemaCheck } from '../data/schema-check.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import { keyOfHexDigest } from '../http/bearer-token.js'
import type { Principal } from './principal.js'

const tokensCheck = compileSchemaCheck(TokensFile)

/**
 * Loads and checks TOKENS_FILE: its schema (no unknown field, a 64-digit hex SHA-256), unique
 * names and hashes, and scopes naming only entities the registry knows. Its tokens read events;
 * `ingest: true` also posts them. Returns them by digest.
 */
export async function loadTokensFile (file: string, registry: EntityRegistry): Promise<Map<string, Principal>> {
  const { tokens } = await readCheckedJsonFile(file, tokensCheck)
  const byDigest = new Map<string, Principal>()
  const names = new Map<string, number>()
  tokens.forEach((entry, index) => {
    const where = `entry tokens[${index}] (${JSON.stringify(entry.name)})`
    const key = keyOfHexDigest(entry.sha256)
    const sameName = names.get(entry.name)
    if (sameName !== undefined) throw new DataFileError(file, where, `the name is already used by tokens[${sameName}]`)
    if (byDigest.has(key)) throw new DataFileError(file, where, 'the same sha256 as an earlier entry')
    if (entry.scope !== undefined) {
      const unknown = registry.unknownIn(entry.scope)
      if (unknown.length > 0) throw new DataFileError(file, `${where}.scope`, `unknown ${unknown.join(', ')}`)
    }
    names.set(entry.name, index)
    byDigest.set(key, { name: entry.name, key: `file:${entry.name}`, read: true, ingest: entry.ingest === true, scope: entry.scope })
  })
  return byDigest
}
