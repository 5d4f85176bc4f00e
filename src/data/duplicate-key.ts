import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './char-codes.js'

function isJsonSpace (code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

/**
 * The first key that one object of a (valid) JSON text holds twice, if any. JSON.parse keeps the
 * last value of a repeated key without a word; a data file is no place for that ambiguity. One
 * pass over the characters, a set of keys per open object.
 */
export function duplicateKeyIn (json: string): string | undefined {
  const objects: Array<Set<string> | undefined> = []
  const length = json.length
  let i = 0
  while (i < length) {
    const code = json.charCodeAt(i)
    if (code === QUOTE) {
      const start = i
      let escaped = false
      i++
      while (i < length) {
        const inner = json.charCodeAt(i)
        if (inner === BACKSLASH) {
          escaped = true
          i += 2
          continue
        }
        if (inner === QUOTE) break
        i++
      }
      const end = i
      i++
      const keys = objects[objects.length - 1]
      if (keys === undefined) continue
      let next = i
      while (next < length && isJsonSpace(json.charCodeAt(next))) next++
      if (json.charCodeAt(next) !== COLON) continue
      const key = escaped ? JSON.parse(json.slice(start, end + 1)) as string : json.slice(start + 1, end)
      if (keys.has(key)) return key
      keys.add(key)
      continue
    }
    if (code === OPEN_OBJECT) objects.push(new Set())
    else if (code === OPEN_ARRAY) objects.push(undefined)
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) objects.pop()
    i++
  }
  return undefined
}
