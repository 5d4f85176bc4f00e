import { readFile } from 'node:fs/promises'
import { parse, type ParseError } from 'jsonc-parser'
import { DataFileError } from './data-file-error.js'

/** Reads a JSON file; a missing file or bad JSON becomes a DataFileError naming it (and the line, for bad JSON). */
export async function readJsonFile (file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new DataFileError(file, 'cannot be read', (error as Error).message)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new DataFileError(file, locateJsonError(text), `invalid JSON (${(error as Error).message})`)
  }
}

/** JSON.parse does not always say where (Node 20 often gives no position); a tolerant parser does. */
function locateJsonError (text: string): string {
  const errors: ParseError[] = []
  parse(text, errors, { disallowComments: true, allowTrailingComma: false })
  const offset = errors[0]?.offset ?? text.length
  return `line ${text.slice(0, offset).split('\n').length}`
}
