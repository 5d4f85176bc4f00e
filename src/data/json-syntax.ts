import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, CR, LF, OPEN_ARRAY, OPEN_OBJECT, QUOTE, SPACE, TAB } from './char-codes.js'

const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const LOWER_E = 0x65
const UPPER_E = 0x45
const TRUE = Buffer.from('true')
const FALSE = Buffer.from('false')
const NULL = Buffer.from('null')
/** The characters a backslash may escape in a JSON string, `u` aside. */
const ESCAPABLE = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'].map((character) => character.charCodeAt(0)))
const LOWER_U = 0x75

/**
 * Whether bytes[from, end) is one JSON text (RFC 8259; its UTF-8 is checked apart, isUtf8), read
 * without making anything of it: a line or an array element longer than an ingest reads
 * (ingest-body.ts) is still told apart from text that is no JSON at all, in one pass of a few
 * nanoseconds a byte, where `JSON.parse` of 16 MiB of tiny nested values held the event loop
 * 1.5 s and took 400 MB. A property test holds it to `JSON.parse`.
 */
export function isJsonText (bytes: Buffer, from: number, end: number): boolean {
  // The brackets open around the value being read: what each one expects to close it.
  const open: number[] = []
  let at = skipJsonWhitespace(bytes, from, end)
  for (;;) {
    // A value begins at `at`.
    if (at >= end) return false
    const first = bytes[at]!
    if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
      const close = first === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY
      at = skipJsonWhitespace(bytes, at + 1, end)
      if (bytes[at] === close && at < end) {
        at++
      } else {
        open.push(close)
        if (close === CLOSE_OBJECT) {
          at = memberValue(bytes, at, end)
          if (at < 0) return false
        }
        continue
      }
    } else if (first === QUOTE) {
      at = stringEnd(bytes, at, end)
    } else if (first === MINUS || (first >= ZERO && first <= NINE)) {
      at = numberEnd(bytes, at, end)
    } else {
      const literal = first === 0x74 ? TRUE : first === 0x66 ? FALSE : first === 0x6e ? NULL : undefined
      at = literal !== undefined && at + literal.length <= end && bytes.compare(literal, 0, literal.length, at, at + literal.length) === 0 ? at + literal.length : -1
    }
    if (at < 0) return false
    // After a value: a comma and the next, or the closing of what holds it, or the end.
    for (;;) {
      at = skipJsonWhitespace(bytes, at, end)
      if (open.length === 0) return at === end
      if (at >= end) return false
      const byte = bytes[at]!
      const close = open[open.length - 1]!
      if (byte === close) {
        open.pop()
        at++
        continue
      }
      if (byte !== COMMA) return false
      at = skipJsonWhitespace(bytes, at + 1, end)
      if (close === CLOSE_OBJECT) {
        at = memberValue(bytes, at, end)
        if (at < 0) return false
      }
      break
    }
  }
}

/** An object's member from its key at `at`: where its value begins, or -1 when the key and colon are not there. */
function memberValue (bytes: Buffer, at: number, end: number): number {
  if (at >= end || bytes[at] !== QUOTE) return -1
  const key = stringEnd(bytes, at, end)
  if (key < 0) return -1
  const colon = skipJsonWhitespace(bytes, key, end)
  if (colon >= end || bytes[colon] !== COLON) return -1
  return skipJsonWhitespace(bytes, colon + 1, end)
}

/** JSON's whitespace: space, tab, line feed, carriage return (no other, not even a byte order mark). */
export function isJsonWhitespace (byte: number): boolean {
  return byte === SPACE || byte === LF || byte === CR || byte === TAB
}

/** Past the JSON whitespace at bytes[from …], up to `end`. */
export function skipJsonWhitespace (bytes: Buffer, from: number, end = bytes.length): number {
  let at = from
  while (at < end && isJsonWhitespace(bytes[at]!)) at++
  return at
}

/** Past the string whose opening quote is at `at`, or -1: no control character unescaped, escapes as JSON has them. */
function stringEnd (bytes: Buffer, at: number, end: number): number {
  for (let i = at + 1; i < end; i++) {
    const byte = bytes[i]!
    if (byte === QUOTE) return i + 1
    if (byte < SPACE) return -1
    if (byte === BACKSLASH) {
      const escaped = bytes[++i]
      if (escaped === undefined || i >= end) return -1
      if (escaped === LOWER_U) {
        if (i + 4 >= end) return -1
        for (let h = 1; h <= 4; h++) if (!isHexDigit(bytes[i + h]!)) return -1
        i += 4
      } else if (!ESCAPABLE.has(escaped)) {
        return -1
      }
    }
  }
  return -1
}

function isHexDigit (byte: number): boolean {
  return (byte >= ZERO && byte <= NINE) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
}

/** Past the number at `at`, or -1: `-`? (`0` | digits not beginning with 0) (`.` digits)? ([eE] [+-]? digits)? */
function numberEnd (bytes: Buffer, at: number, end: number): number {
  let i = at
  if (bytes[i] === MINUS) i++
  if (i >= end) return -1
  if (bytes[i] === ZERO) {
    i++
  } else {
    const start = i
    i = digitsEnd(bytes, i, end)
    if (i === start) return -1
  }
  if (i < end && bytes[i] === DOT) {
    const start = i + 1
    i = digitsEnd(bytes, start, end)
    if (i === start) return -1
  }
  if (i < end && (bytes[i] === LOWER_E || bytes[i] === UPPER_E)) {
    i++
    if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) i++
    const start = i
    i = digitsEnd(bytes, start, end)
    if (i === start) return -1
  }
  return i
}

function digitsEnd (bytes: Buffer, from: number, end: number): number {
  let i = from
  while (i < end && bytes[i]! >= ZERO && bytes[i]! <= NINE) i++
  return i
}
