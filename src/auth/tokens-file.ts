import { TokensFile } from '../../schemas/tokens.js'
import { DataFileError } from '../data/data-file-error.js'
import { readJsonFile } from '../data/read-json-file.js'
import { compileSchemaCheck } from '../data/schema-check.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import { keyOfHexDigest } from '../http/bearer-token.js'
import type { Principal } from './principal.js'

const tokensCheck = compileSchemaCheck(TokensFile)

/**
 * Loads and checks TOKENS_FILE: its schema (no unknown field, a 64-digit hex SHA-256), unique
 * names and hashes, none of a token also configured (`isConfigured`, by key), and scopes naming
 * only entities the registry knows. Its tokens read events;
 * `ingest: true` also posts them. Returns them by digest.
 */
export async function loadTokensFile (file: string, registry: EntityRegistry, isConfigured: (key: string) => boolean): Promise<Map<string, Principal>> {
  const value = await readJsonFile(file, { secret: true })
  if (!tokensCheck.is(value)) {
    const problem = tokensCheck.problem(value)!
    throw new DataFileError(file, problem.path === '' ? 'the top level' : `entry ${withEntryName(problem.path, value)}`, problem.reason)
  }
  const { tokens } = value
  const byDigest = new Map<string, Principal>()
  const names = new Map<string, number>()
  tokens.forEach((entry, index) => {
    const where = `entry tokens[${index}] (${JSON.stringify(entry.name)})`
    const key = keyOfHexDigest(entry.sha256)
    const sameName = names.get(entry.name)
    if (sameName !== undefined) throw new DataFileError(file, where, `the name is already used by tokens[${sameName}]`)
    if (byDigest.has(key)) throw new DataFileError(file, where, 'the same sha256 as an earlier entry')
    // The configured lists are looked in first and give every entity: the entry's scope would be
    // silently ignored (failing open).
    if (isConfigured(key)) throw new DataFileError(file, where, 'its token is also in API_TOKENS or INGEST_TOKENS, which would give it every entity whatever its scope: take it out of one or the other')
    if (entry.scope !== undefined) {
      const unknown = registry.unknownIn(entry.scope)
      if (unknown.length > 0) throw new DataFileError(file, `${where}.scope`, `unknown ${unknown.join(', ')}`)
    }
    names.set(entry.name, index)
    byDigest.set(key, { name: entry.name, key: `file:${entry.name}`, read: true, ingest: entry.ingest === true, scope: entry.scope })
  })
  return byDigest
}

/**
 * A schema problem's path with the entry's name after its index (`tokens[1] ("acme-fm").scopes`),
 * as the file's other messages give it: an operator looks for the name. Only a name that is a
 * string is given.
 */
function withEntryName (path: string, value: unknown): string {
  const index = /^tokens\[(\d+)\]/.exec(path)
  if (index === null) return path
  const entry = (value as { tokens?: unknown[] }).tokens?.[Number(index[1])] as { name?: unknown } | undefined
  const name = entry?.name
  return typeof name === 'string' ? `${index[0]} (${JSON.stringify(name)})${path.slice(index[0].length)}` : path
}
