import { readFile } from 'node:fs/promises'
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
    throw new DataFileError(file, locateJsonError(text, error as Error), `invalid JSON (${(error as Error).message})`)
  }
}

/** V8 reports a character position; people want a line. */
function locateJsonError (text: string, error: Error): string {
  const position = /position (\d+)/.exec(error.message)
  if (position === null) return 'line 1'
  const before = text.slice(0, Number(position[1]))
  return `line ${before.split('\n').length}`
}
