import { parseEventLine, type EventLine } from '../data/event-lines.js'

/**
 * The events of an NDJSON body, one per line (blank lines skipped), each checked as `npm run
 * ingest` checks a line; undefined when the body is not NDJSON at all: it has lines, and not one
 * of them is JSON.
 */
export function ndjsonEvents (text: string): EventLine[] | undefined {
  const lines: EventLine[] = []
  let anyJson = false
  let line = 0
  let from = 0
  while (from <= text.length) {
    let to = text.indexOf('\n', from)
    if (to === -1) to = text.length
    line++
    const content = text.charCodeAt(to - 1) === 13 ? text.slice(from, to - 1) : text.slice(from, to)
    const parsed = parseEventLine(content, line)
    if (parsed !== undefined) {
      lines.push(parsed)
      if (!('problem' in parsed) || !parsed.problem.startsWith('invalid JSON')) anyJson = true
    }
    from = to + 1
  }
  return lines.length > 0 && !anyJson ? undefined : lines
}

/**
 * The events of a JSON array body, each element checked as an NDJSON line is, its index + 1 as
 * its line; undefined when the body is not a JSON array. Elements are cut from the text itself
 * (not re-serialised), so a repeated key in one of them is seen and refused like in a file.
 */
export function jsonArrayEvents (text: string): EventLine[] | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!Array.isArray(value)) return undefined
  return arrayElements(text).map((element, index) => parseEventLine(element, index + 1) ?? { line: index + 1, problem: 'an empty element' })
}

/** The text of each element of a valid JSON array. */
function arrayElements (text: string): string[] {
  const elements: string[] = []
  let depth = 0
  let inString = false
  let start = -1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
      continue
    }
    if (c === 34) {
      inString = true
    } else if (c === 91 || c === 123) { // [ {
      depth++
      if (depth === 1) { start = i + 1; continue }
    } else if (c === 93 || c === 125) { // ] }
      if (depth === 1 && c === 93) {
        const last = text.slice(start, i)
        if (last.trim() !== '' || elements.length > 0) elements.push(last)
      }
      depth--
      continue
    } else if (c === 44 && depth === 1) { // , between elements
      elements.push(text.slice(start, i))
      start = i + 1
    }
  }
  return elements
}
