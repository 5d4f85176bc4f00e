import { isUtf8 } from 'node:buffer'
import { NOT_UTF8, parseEventLine, type EventLine } from '../data/event-lines.js'
import { scanWireLineFrom } from '../data/wire-line.js'
import { CR, LF } from '../data/char-codes.js'

/**
 * The events of an NDJSON body, one per line (blank lines skipped), each checked as `npm run
 * ingest` checks a line; undefined when the body is not NDJSON at all: it has lines, and not one
 * of them is JSON. Read from the bytes: a line already in wire form (what the provider's own
 * tools and most producers post) is scanned as it is (wire-line.ts), with its text as its JSON;
 * any other is decoded and read the thorough way. Each event's JSON is a view into the body
 * (JsonBytes), which the events keep alive until the store has copied them. A line break never falls inside a UTF-8
 * sequence, so decoding line by line reads what decoding the whole body would.
 */
export function ndjsonEvents (body: Buffer): EventLine[] | undefined {
  const lines: EventLine[] = []
  let anyJson = false
  let line = 0
  let from = 0
  const length = body.length
  // A line ends at \n, \r\n or a lone \r, as in EVENTS_FILE (file-lines.ts); the next \r is
  // found once and kept (most bodies have none), not looked for on every line.
  // So is the next \n (a body of lines ended by lone \r would otherwise look for it from every line).
  let cr = body.indexOf(CR)
  let lf = body.indexOf(LF)
  while (from <= length) {
    line++
    // A line in wire form is read without looking for its end first: the scan finds it.
    const fast = scanWireLineFrom(body, from, length, line)
    if (fast !== undefined) {
      lines.push(fast)
      anyJson = true
      const end = fast.end
      // Past its line break: \r\n, a lone \r, or \n (or the body's end).
      from = body[end] === CR && body[end + 1] === LF ? end + 2 : end + 1
      continue
    }
    if (cr !== -1 && cr < from) cr = body.indexOf(CR, from)
    if (lf !== -1 && lf < from) lf = body.indexOf(LF, from)
    let to = lf === -1 ? length : lf
    let end = to
    if (cr !== -1 && cr < to) {
      end = cr
      // \r\n: the line ends at the \r, and the next begins after the \n.
      if (cr + 1 !== to) to = cr
    }
    // Not in wire form (the scan above would have taken it): read the thorough way.
    if (!isUtf8(body.subarray(from, end))) {
      // Decoding would put U+FFFD in place of the bad bytes: another event than the one sent.
      lines.push({ line, problem: NOT_UTF8 })
    } else {
      const parsed = parseEventLine(body.toString('utf8', from, end), line)
      if (parsed !== undefined) {
        lines.push(parsed)
        if (!('problem' in parsed) || !parsed.problem.startsWith('invalid JSON')) anyJson = true
      }
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
