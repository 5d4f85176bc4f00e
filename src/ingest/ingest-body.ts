import { isUtf8 } from 'node:buffer'
import { setImmediate as checkPhase } from 'node:timers/promises'
import { NOT_UTF8, parseEventLine, type EventLine } from '../data/event-lines.js'
import { isJsonText, isJsonWhitespace, skipJsonWhitespace } from '../data/json-syntax.js'
import { scanWireLine, scanWireLineFrom } from '../data/wire-line.js'
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, CR, LF, OPEN_ARRAY, OPEN_OBJECT, QUOTE, SPACE, TAB } from '../data/char-codes.js'

/**
 * Lines (or array elements) read in one turn of the event loop: between turns, other requests are
 * served, and an append of the store that has reached the disk is taken up. 125 lines in wire
 * form are some 60 µs. With 1,000 (about 0.5 ms a turn), the memory store's group commit, whose
 * next group is judged and written only once the append before it is taken up, waited for the
 * body being read every time. With 125, the memory ingest took 9% more events a second over
 * eight pairs of scratch runs in turns (15% in the last three, its main thread 1.95 µs an event
 * against 2.12; five pairs for it, three against by under 15,000 events/s: BENCHMARKS.md, "What
 * profiling found", 2026-12-08).
 */
export const LINES_PER_TURN = 125

/**
 * Bytes of lines read the thorough way (`JSON.parse`, the schema) in one turn, however few lines
 * they are: 1,000 lines of tiny nested values (16 MiB) held the event loop 0.4–0.5 s in one turn
 * (scratch, 2026-11-28). Lines in wire form cost a scan and count only as lines.
 */
export const PARSED_BYTES_PER_TURN = 256 * 1024

/**
 * The longest line (or array element) that is read: a longer one is refused unread. No event's
 * JSON comes near it (its four identifiers are at most 1,024 UTF-16 units each, 6 bytes a unit
 * escaped: about 25 kB in all); one line of 16 MiB of tiny nested values held the event loop
 * 1.5 s in `JSON.parse` (scratch, 2026-11-28). A line in wire form is shorter by its form.
 */
export const MAX_LINE_BYTES = 64 * 1024

const TOO_LONG = `longer than ${MAX_LINE_BYTES} bytes, which no event is: not read`
const NOT_JSON_TOO_LONG = `invalid JSON (longer than ${MAX_LINE_BYTES} bytes, and not JSON)`

/** An ingest body read: its lines, or why the body is refused whole. */
export type IngestBody =
  | { lines: EventLine[] }
  | { rejected: 'invalid_body' | 'payload_too_large' }

/**
 * Reads an ingest body, `LINES_PER_TURN` lines at a time, awaiting `nextTurn` between them. A
 * body of more than `maxLines` lines (or elements) is payload_too_large, found before any line
 * past the limit is read: a refused line costs microseconds and an entry of the answer, so an
 * uncapped 16 MiB body of three-byte lines held the event loop for 14–42 s and answered 334 MB
 * (README, "Limits and timeouts": "Ingest bodies"). A turn of 125 lines is about 60 µs of
 * lines in wire form, 0.6 ms of lines that are not JSON at all.
 */
export async function readIngestBody (body: Buffer, form: 'ndjson' | 'json-array', maxLines: number, nextTurn: () => Promise<unknown> = checkPhase): Promise<IngestBody> {
  if (form === 'ndjson') {
    const reader = new NdjsonReader(body)
    for (;;) {
      reader.readUntil(Math.min(reader.line + LINES_PER_TURN, maxLines))
      if (reader.done) break
      if (reader.line >= maxLines) return { rejected: 'payload_too_large' }
      await nextTurn()
    }
    const lines = reader.result()
    return lines === undefined ? { rejected: 'invalid_body' } : { lines }
  }
  // An array body that is not UTF-8 is no JSON text at all (decoding it would change its events).
  if (!isUtf8(body)) return { rejected: 'invalid_body' }
  const reader = new JsonArrayReader(body)
  for (;;) {
    reader.readUntil(Math.min(reader.line + LINES_PER_TURN, maxLines))
    if (reader.invalid) return { rejected: 'invalid_body' }
    if (reader.done) return { lines: reader.lines }
    if (reader.line >= maxLines) return { rejected: 'payload_too_large' }
    await nextTurn()
  }
}

/** The events of an NDJSON body, read at once (tests, and bodies known to be small); undefined when it is not NDJSON at all. */
export function ndjsonEvents (body: Buffer): EventLine[] | undefined {
  const reader = new NdjsonReader(body)
  while (!reader.done) reader.readUntil(Infinity)
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

  /** Reads lines until `until` of them are read, or PARSED_BYTES_PER_TURN of them parsed, or the body ends. */
  readUntil (until: number): void {
    const body = this.#body
    const lines = this.#lines
    const length = body.length
    let { line } = this
    let from = this.#from
    let cr = this.#cr
    let lf = this.#lf
    let anyJson = this.#anyJson
    let parsed = 0
    while (from <= length && line < until && parsed < PARSED_BYTES_PER_TURN) {
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
      } else if (end - from > MAX_LINE_BYTES && !onlyBlanks(body, from, end)) {
        // Told from text that is no JSON at all (a body of nothing else is not NDJSON), not parsed.
        const json = isJsonText(body, from, end)
        lines.push({ line, problem: json ? TOO_LONG : NOT_JSON_TOO_LONG })
        if (json) anyJson = true
        parsed += end - from
      } else {
        const read = parseEventLine(body.toString('utf8', from, end), line)
        parsed += end - from
        if (read !== undefined) {
          lines.push(read)
          if (!('problem' in read) || !read.problem.startsWith('invalid JSON')) anyJson = true
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

/**
 * The events of a JSON array body, one per element, each checked as a line is (its index + 1 its
 * line), read from the bytes in turns as NDJSON is: an element in wire form is scanned as it is
 * (its JSON a view of the body), any other is decoded and read the thorough way. The body is JSON
 * only if every element is (a JSON text whose elements are each JSON, between `[`, commas and `]`
 * with JSON's whitespace only, is JSON), so an element that is not makes the body invalid.
 *
 * Why not parse the whole text, then cut it: a 16 MiB array held the event loop 135–220 ms in
 * one turn, and every element was then parsed again the slow way, about 0.5–0.9 s of the main
 * thread in all against 50–120 ms for the same events as NDJSON (scratch, 2026-11-28).
 */
class JsonArrayReader {
  readonly #body: Buffer
  readonly lines: EventLine[] = []
  /** Elements read so far. */
  line = 0
  /** Where the next element begins (past the whitespace before it). */
  #from: number
  done = false
  invalid = false

  constructor (body: Buffer) {
    this.#body = body
    const open = skipJsonWhitespace(body, 0)
    if (body[open] !== OPEN_ARRAY) {
      this.invalid = true
      this.#from = body.length
      return
    }
    this.#from = skipJsonWhitespace(body, open + 1)
    // An empty array: nothing but whitespace may follow its `]`.
    if (body[this.#from] === CLOSE_ARRAY) this.#close(this.#from)
  }

  /**
   * Reads elements until `until` of them are read, or PARSED_BYTES_PER_TURN of them parsed, or the
   * array ends, or it is found not to be JSON.
   */
  readUntil (until: number): void {
    const body = this.#body
    let parsedBytes = 0
    while (!this.done && !this.invalid && this.line < until && parsedBytes < PARSED_BYTES_PER_TURN) {
      const from = this.#from
      const after = elementEnd(body, from)
      if (after === -1) {
        this.invalid = true
        return
      }
      let end = after
      while (end > from && isJsonWhitespace(body[end - 1]!)) end--
      const line = ++this.line
      const wire = scanWireLine(body, from, end, line)
      if (wire !== undefined) {
        this.lines.push(wire)
      } else if (end - from > MAX_LINE_BYTES) {
        // Not parsed, but the body is JSON only if the element is.
        parsedBytes += end - from
        if (!isJsonText(body, from, end)) {
          this.invalid = true
          return
        }
        this.lines.push({ line, problem: TOO_LONG })
      } else {
        const parsed = parseEventLine(body.toString('utf8', from, end), line)
        parsedBytes += end - from
        // Undefined for an empty element (`[1,,2]`, `[1,]`), which is no JSON either.
        if (parsed === undefined || ('problem' in parsed && parsed.problem.startsWith('invalid JSON'))) {
          this.invalid = true
          return
        }
        this.lines.push(parsed)
      }
      if (body[after] === COMMA) this.#from = skipJsonWhitespace(body, after + 1)
      else this.#close(after)
    }
  }

  /** The array's `]` is at `at`: only whitespace may follow it. */
  #close (at: number): void {
    if (skipJsonWhitespace(this.#body, at + 1) === this.#body.length) this.done = true
    else this.invalid = true
  }
}

/** Whether bytes[from, end) are spaces and tabs only: a blank line, however long. */
function onlyBlanks (bytes: Buffer, from: number, end: number): boolean {
  for (let at = from; at < end; at++) if (bytes[at] !== SPACE && bytes[at] !== TAB) return false
  return true
}

/**
 * Where the array element beginning at `from` ends: the index of the comma or `]` after it, outside
 * strings and nested brackets; -1 when the body ends first or a bracket closes what was not opened
 * in it. Exact for JSON; for anything else the element's own parse then fails. A UTF-8 sequence
 * has no byte below 0x80, so no byte of one is taken for a quote or a bracket.
 */
function elementEnd (bytes: Buffer, from: number): number {
  let depth = 0
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at]!
    if (byte === QUOTE) {
      // To the string's closing quote, past escaped characters.
      for (at++; at < bytes.length && bytes[at] !== QUOTE; at++) if (bytes[at] === BACKSLASH) at++
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth++
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      if (depth === 0) return byte === CLOSE_ARRAY ? at : -1
      depth--
    } else if (byte === COMMA && depth === 0) {
      return at
    }
  }
  return -1
}
