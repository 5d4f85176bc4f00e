import { parse, type ParseError } from 'jsonc-parser'
import type { Static, TSchema } from '@sinclair/typebox'
import { DataFileError } from './data-file-error.js'
import { readRegularFile } from './regular-file.js'
import { duplicateKeyIn } from './duplicate-key.js'
import type { SchemaCheck } from './schema-check.js'

/**
 * Reads a JSON file; a missing file or bad JSON becomes a DataFileError naming it (and the line,
 * for bad JSON). `secret`: the file holds secrets (TOKENS_FILE), so bad JSON's message does not
 * repeat the parser's, which quotes the text around the fault (a token pasted unquoted).
 */
export async function readJsonFile (file: string, { secret = false } = {}): Promise<unknown> {
  let text: string
  try {
    text = await readRegularFile(file)
  } catch (error) {
    throw new DataFileError(file, 'cannot be read', (error as Error).message)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new DataFileError(file, locateJsonError(text), secret ? 'invalid JSON (the parser\'s message is not repeated: it quotes the text, which may hold a token)' : `invalid JSON (${(error as Error).message})`)
  }
  const repeated = duplicateKeyIn(text)
  if (repeated !== undefined) throw new DataFileError(file, locateKey(text, repeated), `${JSON.stringify(repeated)} is given twice in one object`)
  return value
}

/** The line of the second time a key appears (a person fixing the file looks there). */
function locateKey (text: string, key: string): string {
  const quoted = JSON.stringify(key)
  const first = text.indexOf(quoted)
  let at = text.indexOf(quoted, first + 1)
  if (at === -1) at = first
  return `line ${text.slice(0, at).split('\n').length}`
}

/** JSON.parse does not always say where (Node 20 often gives no position); a tolerant parser does. */
function locateJsonError (text: string): string {
  const errors: ParseError[] = []
  parse(text, errors, { disallowComments: true, allowTrailingComma: false })
  const offset = errors[0]?.offset ?? text.length
  return `line ${text.slice(0, offset).split('\n').length}`
}

/** Reads a JSON file and checks it against its schema; the first misfit names the entry. */
export async function readCheckedJsonFile<T extends TSchema> (file: string, check: SchemaCheck<T>): Promise<Static<T>> {
  const value = await readJsonFile(file)
  if (!check.is(value)) {
    const problem = check.problem(value)!
    throw new DataFileError(file, problem.path === '' ? 'the top level' : `entry ${problem.path}`, problem.reason)
  }
  return value
}
