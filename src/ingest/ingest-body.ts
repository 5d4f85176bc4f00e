import { isUtf8 } from 'node:buffer'
import { setImmediate as checkPhase } from 'node:timers/promises'
import { NOT_UTF8, parseEventLine, type EventLine } from '../data/event-lines.js'
import { scanWireLineFrom } from '../data/wire-line.js'
import { CR, LF } from '../data/char-codes.js'

/** Lines (or array elements) read in one turn of the event loop: between turns, other requests are served. */
const LINES_PER_TURN = 1000

/** An ingest body read: its lines, or why the body is refused whole. */
export type IngestBody =
  | { lines: EventLine[] }
  | { rejected: 'invalid_body' | 'payload_too_large' }

/**
 * Reads an ingest body, `LINES_PER_TURN` lines at a time, awaiting `nextTurn` between them. A
 * body of more than `maxLines` lines (or elements) is payload_too_large, found before any line
 * past the limit is read: a refused line costs microseconds and an entry of the answer, so an
 * uncapped 16 MiB body of three-byte lines held the event loop for 14–42 s and answered 334 MB
 * (README, "Limits and timeouts": "Ingest bodies"). A turn of 1,000 lines is about 0.5 ms of
 * lines in wire form, 10 ms of lines that are not JSON at all.
 */
export async function readIngestBody (body: Buffer, form: 'ndjson' | 'json-array', maxLines: number, nextTurn: () => Promise<unknown> = checkPhase): Promise<IngestBody> {
  if (form === 'ndjson') {
    const reader = new NdjsonReader(body)
    for (let until = LINES_PER_TURN; ; until += LINES_PER_TURN) {
      reader.readUntil(Math.min(until, maxLines))
      if (reader.done) break
      if (reader.line >= maxLines) return { rejected: 'payload_too_large' }
      await nextTurn()
    }
    const lines = reader.result()
    return lines === undefined ? { rejected: 'invalid_body' } : { lines }
  }
  // An array body that is not UTF-8 is no JSON text at all (decoding it would change its events).
  if (!isUtf8(body)) return { rejected: 'invalid_body' }
  const text = body.toString('utf8')
  const bounds = arrayElementBounds(text, maxLines)
  if (bounds === 'too many') return { rejected: 'payload_too_large' }
  if (bounds === undefined || !isJson(text)) return { rejected: 'invalid_body' }
  const lines: EventLine[] = []
  for (let index = 0; index < bounds.length / 2; index++) {
    if (index > 0 && index % LINES_PER_TURN === 0) await nextTurn()
    lines.push(parseEventLine(text.slice(bounds[2 * index], bounds[2 * index + 1]), index + 1) ?? { line: index + 1, problem: 'an empty element' })
  }
  return { lines }
}

/** The events of an NDJSON body, read at once (tests, and bodies known to be small); undefined when it is not NDJSON at all. */
export function ndjsonEvents (body: Buffer): EventLine[] | undefined {
  const reader = new NdjsonReader(body)
  reader.readUntil(Infinity)
  return reader.result()
}

/**
 * The events of an NDJSON body, one per line (blank lines skipped), each checked as `npm run
 * ingest` checks a line; no result when the body is not NDJSON at all: it has lines, and not one
 * of them is JSON. Read from the bytes: a line already in wire form (what the provider's own
 * tools and most producers post) is scanned as it is (wire-line.ts), with its text as its JSON;
 * any other is decoded and read the thorough way. Each event's JSON is a view into the body
 * (JsonBytes), which the events keep alive until the store has copied them. A line break never falls inside a UTF-8
 * sequence, so decoding line by line reads what decoding the whole body would.
 */
class NdjsonReader {
  readonly #body: Buffer
  readonly #lines: EventLine[] = []
  #anyJson = false
  /** Lines read so far (blank ones included). */
  line = 0
  #from = 0
  // A line ends at \n, \r\n or a lone \r, as in EVENTS_FILE (file-lines.ts); the next \r is
  // found once and kept (most bodies have none), not looked for on every line.
  // So is the next \n (a body of lines ended by lone \r would otherwise look for it from every line).
  #cr: number
  #lf: number

  constructor (body: Buffer) {
    this.#body = body
    this.#cr = body.indexOf(CR)
    this.#lf = body.indexOf(LF)
  }

  /** Whether the body is read to its end: a line break at its very end starts no line. */
  get done (): boolean {
    return this.#from >= this.#body.length
  }

  /** Undefined when the body is not NDJSON at all. */
  result (): EventLine[] | undefined {
    return this.#lines.length > 0 && !this.#anyJson ? undefined : this.#lines
  }

  /** Reads lines until `until` of them are read, or the body ends. */
  readUntil (until: number): void {
    const body = this.#body
    const lines = this.#lines
    const length = body.length
    let { line } = this
    let from = this.#from
    let cr = this.#cr
    let lf = this.#lf
    let anyJson = this.#anyJson
    while (from <= length && line < until) {
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
    this.line = line
    this.#from = from
    this.#cr = cr
    this.#lf = lf
    this.#anyJson = anyJson
  }
}

/** Whether the text is JSON. */
function isJson (text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * Where each element of a JSON array's text begins and ends (pairs of indexes), cut from the
 * text itself (not re-serialised), so that a repeated key in one of them is seen and refused like
 * in a file; undefined when the text does not begin as an array, 'too many' past `maxElements`.
 * Cut before the text is parsed (the cut is exact for valid JSON, which is then checked), so that
 * a body of millions of tiny elements is refused before it is made into millions of values.
 */
function arrayElementBounds (text: string, maxElements: number): number[] | 'too many' | undefined {
  const first = text.search(/\S/)
  if (first === -1 || text.charCodeAt(first) !== 91) return undefined // [
  const bounds: number[] = []
  let depth = 0
  let inString = false
  let start = -1
  for (let i = first; i < text.length; i++) {
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
      if (depth === 1 && c === 93 && (bounds.length > 0 || text.slice(start, i).trim() !== '')) bounds.push(start, i)
      depth--
    } else if (c === 44 && depth === 1) { // , between elements
      bounds.push(start, i)
      start = i + 1
    } else {
      continue
    }
    if (bounds.length > 2 * maxElements) return 'too many'
  }
  return bounds
}
