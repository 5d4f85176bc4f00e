import type { Message } from '../../schemas/message.js'
import type { StoredEvent } from './event-lines.js'
import type { JsonBytes } from './json-bytes.js'
import type { EntityRegistry, KnownNumbers } from '../registry/entity-registry.js'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS, daysInMonth, utcMs } from '../time/rfc3339.js'
import { BACKSLASH, CLOSE_OBJECT, COMMA, CR, DEL, LF, QUOTE, SPACE } from './char-codes.js'
import { entityNumber } from './entity-numbers.js'
import { IDENTIFIER_SEED } from './identifier-seed.js'
import { intern } from './intern.js'

/**
 * An event line read from its bytes when it is already the wire JSON the stores write, byte for
 * byte, in its plainest form: printable ASCII, no escape, the keys in wire order, no spaces, a UTC
 * date_time with milliseconds. Every line the provider, its generator, its simulator and the
 * benchmark write has that form, so ingests and loads take this way; anything else (another
 * order, spaces, escapes, non-ASCII, a bad value) is left to the general way (event-lines.ts),
 * which also says what is wrong with a bad line.
 *
 * Why bytes: JSON.parse of a 180-byte line, then the schema check and the comparison with the
 * wire form, is about 1.6 µs here, most of an ingest's work per event; a scan of the bytes that
 * only checks what the form allows is a fraction of that (BENCHMARKS.md, "What profiling
 * found"). What it accepts, the general way accepts too, as the same message: a property test
 * (test/wire-line.test.ts) holds the two to that.
 */

/** The longest identifier the schema allows (Identifier's maxLength; ASCII: one byte a character). */
const MAX_IDENTIFIER = 1024

const MESSAGE_ID_KEY = Buffer.from('{"message_id":"')
const MESSAGE_CODE_KEY = Buffer.from('","message_code":"')
const CATEGORY_KEY = Buffer.from('","message_category":"')
const ALERT = Buffer.from('alert","date_time":"')
const NOTIFICATION = Buffer.from('notification","date_time":"')
const DEVICE_KEY = Buffer.from('","device_id":"')
const SPACE_KEY = Buffer.from('","space_id":"')
const DATE_TIME_LENGTH = 24

/** Whether bytes[at …] starts with `literal`. */
function startsWith (bytes: Buffer, at: number, end: number, literal: Buffer): boolean {
  const length = literal.length
  if (at + length > end) return false
  for (let i = 0; i < length; i++) if (bytes[at + i] !== literal[i]) return false
  return true
}

/** The FNV-1a hash of the last identifier identifierEnd read (a second return value, without an object). */
let scannedHash = 0

/** Where the identifiers' hash starts (identifier-seed.ts: random for each process, shared with the message_id tables). */
const IDENTIFIER_HASH_SEED = (0x811c9dc5 ^ IDENTIFIER_SEED) | 0

/**
 * The end of an identifier's value starting at `at` (the index of its closing quote), or -1 when
 * it is not one this form takes: 1 to 1024 bytes of printable ASCII, no quote, backslash or
 * comma, no space at either end (the schema's Identifier, on ASCII). Leaves its hash in
 * scannedHash.
 */
function identifierEnd (bytes: Buffer, at: number, end: number): number {
  let i = at
  let hash = IDENTIFIER_HASH_SEED
  const limit = Math.min(end, at + MAX_IDENTIFIER + 1)
  while (i < limit) {
    const byte = bytes[i]!
    if (byte === QUOTE) break
    if (byte < SPACE || byte >= DEL || byte === BACKSLASH || byte === COMMA) return -1
    hash = Math.imul(hash ^ byte, 0x01000193)
    i++
  }
  if (i === at || i >= limit || bytes[at] === SPACE || bytes[i - 1] === SPACE) return -1
  scannedHash = hash
  return i
}

/**
 * Distinct identifiers remembered by their bytes, and the longest one remembered: at most 8 MiB
 * of keys. Past either, an identifier is made as a string each time, and not interned: a flood of
 * new IDs (a hostile ingest, refused for unknown entities) must not grow the process's memory;
 * the memory store interns what it stores anyway.
 */
export const MAX_REMEMBERED = 1 << 16
const MAX_REMEMBERED_BYTES = 128

/**
 * Codes, devices and spaces by their bytes: the interned string of an identifier without making
 * a string of it first (a string from bytes is a call into C++, about 100 ns; a line names three
 * of these). Open addressing on the hash identifierEnd computed. Bounded (above): a flood of
 * new IDs fills it once, then costs what it would without it.
 *
 * The identifiers' bytes are kept one after the other in one buffer, their places and lengths
 * in typed arrays: a lookup reads two arrays and that buffer, all of them small and in the CPU
 * cache under an ingest. A Buffer per identifier (as it was) scattered thousands of objects over
 * the heap, and the lookup was a ninth of an ingest's profile (BENCHMARKS.md, "What profiling
 * found").
 */
class RememberedIdentifiers {
  #mask = (1 << 10) - 1
  #hashes = new Int32Array(this.#mask + 1)
  /** Where a slot's identifier starts in #bytes, and its length in bytes: 0 for a free slot (an identifier has at least one). */
  #starts = new Int32Array(this.#mask + 1)
  #lengths = new Int32Array(this.#mask + 1)
  #texts: string[] = new Array(this.#mask + 1)
  /** Each slot's identifier's place in the order they were remembered (slots move as the table grows; these do not). */
  #orders = new Int32Array(this.#mask + 1)
  /** By that place: the identifier's entity number (entity-numbers.ts), or -1 until one is asked for. */
  #entityNumbers = new Int32Array(1024).fill(-1)
  #bytes = Buffer.allocUnsafe(16 * 1024)
  #used = 0
  #size = 0

  /** The identifier's interned string; its place in the remembered order is left in rememberedOrder (-1: not remembered). */
  text (bytes: Buffer, start: number, end: number, hash: number): string {
    const length = end - start
    const mask = this.#mask
    const lengths = this.#lengths
    let slot = slotOf(hash) & mask
    for (let kept = lengths[slot]!; kept !== 0; kept = lengths[slot]!) {
      if (this.#hashes[slot] === hash && kept === length && sameBytes(this.#bytes, this.#starts[slot]!, bytes, start, length)) {
        rememberedOrder = this.#orders[slot]!
        return this.#texts[slot]!
      }
      slot = (slot + 1) & mask
    }
    rememberedOrder = -1
    if (this.#size >= MAX_REMEMBERED || length > MAX_REMEMBERED_BYTES) return bytes.toString('latin1', start, end)
    const text = intern(bytes.toString('latin1', start, end))
    if (this.#used + length > this.#bytes.length) {
      const grown = Buffer.allocUnsafe(2 * this.#bytes.length)
      this.#bytes.copy(grown, 0, 0, this.#used)
      this.#bytes = grown
    }
    this.#starts[slot] = this.#used
    this.#used += bytes.copy(this.#bytes, this.#used, start, end)
    this.#lengths[slot] = length
    this.#hashes[slot] = hash
    this.#texts[slot] = text
    rememberedOrder = this.#orders[slot] = this.#size
    if (this.#size === this.#entityNumbers.length) {
      const numbers = new Int32Array(2 * this.#size).fill(-1)
      numbers.set(this.#entityNumbers)
      this.#entityNumbers = numbers
    }
    if (++this.#size * 2 > mask) this.#grow()
    return text
  }

  /**
   * The entity number of a remembered identifier (its place in the remembered order, and its
   * text), given it when first asked: an ingest checks and numbers each event's device and space
   * by a read of an array, not a Map lookup each (a tenth of an ingest's time). Identifiers the
   * registry does not know are numbered too when an ingest names them (WireEvent.isKnownBy), at
   * most the remembered ones (MAX_REMEMBERED): entity-numbers.ts counts them in its bound.
   */
  entityNumber (order: number, text: string): number {
    const known = this.#entityNumbers[order]!
    return known !== -1 ? known : (this.#entityNumbers[order] = entityNumber(text))
  }

  #grow (): void {
    const hashes = this.#hashes
    const starts = this.#starts
    const lengths = this.#lengths
    const texts = this.#texts
    const mask = this.#mask * 2 + 1
    this.#mask = mask
    this.#hashes = new Int32Array(mask + 1)
    this.#starts = new Int32Array(mask + 1)
    this.#lengths = new Int32Array(mask + 1)
    this.#texts = new Array(mask + 1)
    const orders = this.#orders
    this.#orders = new Int32Array(mask + 1)
    for (let i = 0; i < lengths.length; i++) {
      if (lengths[i] === 0) continue
      let slot = slotOf(hashes[i]!) & mask
      while (this.#lengths[slot] !== 0) slot = (slot + 1) & mask
      this.#hashes[slot] = hashes[i]!
      this.#starts[slot] = starts[i]!
      this.#lengths[slot] = lengths[i]!
      this.#texts[slot] = texts[i]!
      this.#orders[slot] = orders[i]!
    }
  }
}

/**
 * The hash's bits mixed down into its low ones, which pick the slot: FNV-1a carries a byte only
 * upwards, so identifiers that differ only in their bytes' high bits share low bits whatever the
 * seed, and would share runs of slots.
 */
function slotOf (hash: number): number {
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  return hash ^ (hash >>> 13)
}

/** Whether a[aStart …] and b[bStart …] hold the same `length` bytes. */
function sameBytes (a: Buffer, aStart: number, b: Buffer, bStart: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[aStart + i] !== b[bStart + i]) return false
  return true
}

const remembered = new RememberedIdentifiers()

/** The remembered order of the identifier the last call of text() read (a second return value, without an object); -1: not remembered. */
let rememberedOrder = -1

/** Whether the 24 bytes at `at` hold only printable ASCII without quote or backslash (the date-time's text). */
function isPlainText (bytes: Buffer, at: number, length: number): boolean {
  for (let i = at; i < at + length; i++) {
    const byte = bytes[i]!
    if (byte < SPACE || byte >= DEL || byte === QUOTE || byte === BACKSLASH) return false
  }
  return true
}

/** The value of the decimal digits bytes[at, at + count), or NaN. */
function digitsAt (bytes: Buffer, at: number, count: number): number {
  let value = 0
  for (let i = at; i < at + count; i++) {
    const digit = bytes[i]! - 0x30
    if (digit < 0 || digit > 9) return Number.NaN
    value = value * 10 + digit
  }
  return value
}

/**
 * The time of a wire-form date-time, `2026-11-20T10:00:00.000Z`, read from its 24 bytes; undefined
 * when they are not one, or when it is outside what every store can hold (parseEventTime's rule).
 * Days from the civil date by arithmetic: Date.UTC was a fifth of a line's scan.
 */
function wireTimeAt (bytes: Buffer, at: number): number | undefined {
  if (bytes[at + 4] !== 0x2d || bytes[at + 7] !== 0x2d || bytes[at + 10] !== 0x54 || bytes[at + 13] !== 0x3a ||
    bytes[at + 16] !== 0x3a || bytes[at + 19] !== 0x2e || bytes[at + 23] !== 0x5a) return undefined
  const year = digitsAt(bytes, at, 4)
  const month = digitsAt(bytes, at + 5, 2)
  const day = digitsAt(bytes, at + 8, 2)
  const hour = digitsAt(bytes, at + 11, 2)
  const minute = digitsAt(bytes, at + 14, 2)
  const second = digitsAt(bytes, at + 17, 2)
  const millis = digitsAt(bytes, at + 20, 3)
  // NaN (a non-digit) fails every comparison.
  if (!(year >= 0 && month >= 1 && month <= 12 && day >= 1 && hour <= 23 && minute <= 59 && second <= 59 && millis >= 0)) return undefined
  if (day > daysInMonth(year, month)) return undefined
  const epochMs = utcMs(year, month, day, hour, minute, second, millis)
  return epochMs < EVENT_TIME_MIN_MS || epochMs >= EVENT_TIME_MAX_MS ? undefined : epochMs
}

/**
 * Where the parts of the last line scanWireParts accepted are (one object, reused: a line's parts
 * are read before the next line is scanned).
 */
export interface WireParts {
  idStart: number
  idEnd: number
  /** FNV-1a of the message_id from the shared seed (messageIdHashOfFnv finishes it into the store's hash). */
  idFnv: number
  codeStart: number
  codeEnd: number
  codeHash: number
  category: Message['message_category']
  timeStart: number
  epochMs: number
  /** The interned device ID, or undefined for a space's own event. */
  deviceId: string | undefined
  spaceId: string
  /** Their places in the remembered identifiers' order (-1: not remembered, or no device), for entity numbers. */
  deviceOrder: number
  spaceOrder: number
  /** Where the line ends (its closing brace's next byte): the scan's `end`, or, with an open end, the line break there. */
  end: number
}

const parts: WireParts = { idStart: 0, idEnd: 0, idFnv: 0, codeStart: 0, codeEnd: 0, codeHash: 0, category: 'alert', timeStart: 0, epochMs: 0, deviceId: undefined, spaceId: '', deviceOrder: -1, spaceOrder: -1, end: 0 }

/**
 * Whether the line at bytes[start, end) is in the plain wire form (above), every rule of it
 * checked; its parts are then in the object it returns (the same object every time), with the
 * device and space remembered (interned) but no string made of the message_id or the date-time.
 * The one check of the form: scanWireLine and the memory store's loader (which keeps a line as its
 * bytes and makes its message only when one is read) both take lines through it.
 */
export function scanWireParts (bytes: Buffer, start: number, end: number, openEnd = false): WireParts | undefined {
  if (!startsWith(bytes, start, end, MESSAGE_ID_KEY)) return undefined
  const idStart = start + MESSAGE_ID_KEY.length
  const idEnd = identifierEnd(bytes, idStart, end)
  if (idEnd === -1 || !startsWith(bytes, idEnd, end, MESSAGE_CODE_KEY)) return undefined
  const idFnv = scannedHash
  const codeStart = idEnd + MESSAGE_CODE_KEY.length
  const codeEnd = identifierEnd(bytes, codeStart, end)
  if (codeEnd === -1 || !startsWith(bytes, codeEnd, end, CATEGORY_KEY)) return undefined
  const codeHash = scannedHash
  let at = codeEnd + CATEGORY_KEY.length
  let category: Message['message_category']
  if (startsWith(bytes, at, end, ALERT)) {
    category = 'alert'
    at += ALERT.length
  } else if (startsWith(bytes, at, end, NOTIFICATION)) {
    category = 'notification'
    at += NOTIFICATION.length
  } else {
    return undefined
  }
  const timeStart = at
  at += DATE_TIME_LENGTH
  if (at > end || !isPlainText(bytes, timeStart, DATE_TIME_LENGTH)) return undefined
  let deviceId: string | undefined
  let deviceOrder = -1
  if (startsWith(bytes, at, end, DEVICE_KEY)) {
    const deviceStart = at + DEVICE_KEY.length
    const deviceEnd = identifierEnd(bytes, deviceStart, end)
    if (deviceEnd === -1) return undefined
    deviceId = remembered.text(bytes, deviceStart, deviceEnd, scannedHash)
    deviceOrder = rememberedOrder
    at = deviceEnd
  }
  if (!startsWith(bytes, at, end, SPACE_KEY)) return undefined
  const spaceStart = at + SPACE_KEY.length
  const spaceEnd = identifierEnd(bytes, spaceStart, end)
  // The line ends right after the space's closing quote and the object's brace: at `end`, or,
  // with an open end, at a line break before it (no byte of the line can be one: the form takes
  // printable ASCII only, so the scan never reads past its line).
  if (spaceEnd === -1 || spaceEnd + 1 >= end || bytes[spaceEnd + 1] !== CLOSE_OBJECT) return undefined
  const lineEnd = spaceEnd + 2
  if (lineEnd !== end && !(openEnd && (bytes[lineEnd] === LF || bytes[lineEnd] === CR))) return undefined
  const spaceId = remembered.text(bytes, spaceStart, spaceEnd, scannedHash)
  const spaceOrder = rememberedOrder
  const epochMs = wireTimeAt(bytes, timeStart)
  if (epochMs === undefined) return undefined
  parts.idStart = idStart
  parts.idEnd = idEnd
  parts.idFnv = idFnv
  parts.codeStart = codeStart
  parts.codeEnd = codeEnd
  parts.codeHash = codeHash
  parts.category = category
  parts.timeStart = timeStart
  parts.epochMs = epochMs
  parts.deviceId = deviceId
  parts.spaceId = spaceId
  parts.deviceOrder = deviceOrder
  parts.spaceOrder = spaceOrder
  parts.end = lineEnd
  return parts
}

/**
 * The event of the line at bytes[start, end) when the line is in the plain wire form (above);
 * otherwise undefined. Its message is not made yet (WireEvent). `line`: its number, for an
 * ingest's report.
 */
export function scanWireLine (bytes: Buffer, start: number, end: number, line = 0): WireEvent | undefined {
  const wire = scanWireParts(bytes, start, end)
  if (wire === undefined) return undefined
  return new WireEvent(bytes, start, end, wire, line)
}

/**
 * scanWireLine for a line whose end is not looked for first: the event of the line starting at
 * `start` when it is in the plain wire form and ends at a line break (`\n` or `\r`) or at `limit`;
 * its end is the event's `end`. An ingest's body of wire lines is read without a search for each
 * line's end first (Buffer#indexOf, a call into C++ for every line): reading a body of 1,000 of
 * the benchmark's lines took 434 ns a line against 492, and the provider's main thread 1.40 µs of
 * user time an ingested event against 1.48 (scratch, 2026-11-27; BENCHMARKS.md).
 */
export function scanWireLineFrom (bytes: Buffer, start: number, limit: number, line = 0): WireEvent | undefined {
  const wire = scanWireParts(bytes, start, limit, true)
  if (wire === undefined) return undefined
  return new WireEvent(bytes, start, wire.end, wire, line)
}

/**
 * An event read from a line in the plain wire form: what the scan read of it (its time, its
 * device and space, interned, and where its message_id is), and the line itself, which is its
 * wire JSON byte for byte (so it is also the event's JsonBytes), and its line's number: one
 * object is the ingest's whole line (EventLine, IngestEvent: `event` and `json` are itself). Its
 * message object, with its message_id and date_time strings, is made from the bytes the first
 * time one reads `message`.
 *
 * Why: an ingest in wire form needs none of it (the registry's check reads the entities, the
 * memory store keeps bytes and hashes, the file gets the bytes), and every message made was kept
 * by the store, so the collector copied and traced each ingested event's three objects, and the
 * messages were a third of an ingest's time with the collector's share (BENCHMARKS.md, "What
 * profiling found"). Whoever reads it (a stream, MQTT, the InfluxDB store) gets the same
 * message as the scan would have made.
 */
export class WireEvent implements StoredEvent, JsonBytes {
  readonly bytes: Buffer
  readonly start: number
  readonly end: number
  readonly epochMs: number
  /** The interned device ID, or undefined for a space's own event (named as the message names it). */
  readonly device_id: string | undefined
  /** The interned space ID. */
  readonly space_id: string
  /** Where its message_id ends in bytes (it starts WIRE_MESSAGE_ID_START after `start`). */
  readonly idEnd: number
  /** FNV-1a of its message_id, as the scan computed it (WireParts.idFnv). */
  readonly idFnv: number
  readonly #deviceOrder: number
  readonly #spaceOrder: number
  /** The line's number in its body or file (an ingest's report names it). */
  readonly line: number
  #message: Message | undefined

  constructor (bytes: Buffer, start: number, end: number, wire: WireParts, line: number) {
    this.line = line
    this.bytes = bytes
    this.start = start
    this.end = end
    this.epochMs = wire.epochMs
    this.device_id = wire.deviceId
    this.space_id = wire.spaceId
    this.idEnd = wire.idEnd
    this.idFnv = wire.idFnv
    this.#deviceOrder = wire.deviceOrder
    this.#spaceOrder = wire.spaceOrder
  }

  /** Its device's entity number (entity-numbers.ts), -1 for a space's own event; numbered when first asked. */
  get deviceNumber (): number {
    const deviceId = this.device_id
    if (deviceId === undefined) return -1
    return this.#deviceOrder === -1 ? entityNumber(deviceId) : remembered.entityNumber(this.#deviceOrder, deviceId)
  }

  /**
   * Whether the registry knows its entity (its device, or for a space's own event its space), by
   * the entity's number when the scan remembered the identifier (a read of two arrays; an ingest
   * asked the registry's Map for every event), by its ID otherwise. Identifiers numbered here are
   * at most the remembered ones (MAX_REMEMBERED), known or not.
   */
  isKnownBy (known: KnownNumbers, registry: Pick<EntityRegistry, 'knowsEntityOf'>): boolean {
    const deviceId = this.device_id
    if (deviceId !== undefined) return this.#deviceOrder === -1 ? registry.knowsEntityOf(this) : known.devices.has(this.deviceNumber)
    return this.#spaceOrder === -1 ? registry.knowsEntityOf(this) : known.spaces.has(this.spaceNumber)
  }

  /** Whether the registry has its space (by number when the scan remembered it, as isKnownBy). */
  isSpaceKnownBy (known: KnownNumbers, registry: Pick<EntityRegistry, 'knowsSpace'>): boolean {
    return this.#spaceOrder === -1 ? registry.knowsSpace(this.space_id) : known.spaces.has(this.spaceNumber)
  }

  /** Its space's entity number; numbered when first asked. */
  get spaceNumber (): number {
    return this.#spaceOrder === -1 ? entityNumber(this.space_id) : remembered.entityNumber(this.#spaceOrder, this.space_id)
  }

  get message (): Message {
    return (this.#message ??= wireMessage(this.bytes, scanWireParts(this.bytes, this.start, this.end)!))
  }

  /** Itself, as the event of its line (EventLine, IngestEvent). */
  get event (): WireEvent {
    return this
  }

  /** Itself, as its JSON (EventLine, IngestEvent). */
  get json (): WireEvent {
    return this
  }

  /** Its message_id, made from its bytes (and not kept). */
  get messageId (): string {
    return this.#message?.message_id ?? this.bytes.toString('latin1', this.start + WIRE_MESSAGE_ID_START, this.idEnd)
  }
}

/**
 * The message of an event's wire JSON (what encodeMessage writes, and what the stores keep):
 * read from its bytes when it is in the plain wire form, else parsed (a wire JSON's keys are in
 * the message's order already).
 */
export function messageOfWireJson (bytes: Buffer, start: number, end: number): Message {
  const wire = scanWireParts(bytes, start, end)
  return wire !== undefined ? wireMessage(bytes, wire) : JSON.parse(bytes.toString('utf8', start, end)) as Message
}

/** The message of a line scanWireParts accepted, from its parts. */
export function wireMessage (bytes: Buffer, wire: WireParts): Message {
  const message: Message = {
    message_id: bytes.toString('latin1', wire.idStart, wire.idEnd),
    message_code: remembered.text(bytes, wire.codeStart, wire.codeEnd, wire.codeHash),
    message_category: wire.category,
    date_time: bytes.toString('latin1', wire.timeStart, wire.timeStart + DATE_TIME_LENGTH)
  }
  if (wire.deviceId !== undefined) message.device_id = wire.deviceId
  message.space_id = wire.spaceId
  return message
}

/** Where the message_id of a line in the plain wire form begins, from the line's start. */
export const WIRE_MESSAGE_ID_START = MESSAGE_ID_KEY.length

/**
 * Where the message_id of a line in the plain wire form that starts at bytes[start] ends: at the
 * next quote (an identifier of that form has none).
 */
export function wireMessageIdEnd (bytes: Buffer, start: number): number {
  return bytes.indexOf(QUOTE, start + WIRE_MESSAGE_ID_START)
}

/** Where the code wireCodeStart found ends (a second return value, without an object). */
let wireCodeEnd = 0

/** Where the message code of the event whose JSON in the plain wire form begins at bytes[start] begins (its end: wireCodeEnd). */
function wireCodeStart (bytes: Buffer, start: number): number {
  let at = start + WIRE_MESSAGE_ID_START
  while (bytes[at] !== QUOTE) at++
  const codeStart = at + MESSAGE_CODE_KEY.length
  at = codeStart
  while (bytes[at] !== QUOTE) at++
  wireCodeEnd = at
  return codeStart
}

/** What wireCodeAndCategory reads of an event. */
export interface WireCodeAndCategory {
  code: string
  category: Message['message_category']
}

/**
 * The message code (remembered by its bytes, as the scan remembers identifiers: no string is made
 * for a code seen before) and the category of the event whose JSON in the plain wire form begins
 * at bytes[start], written into `into` (one object for a whole pass): what the memory store's
 * index of codes is built from, without making messages.
 */
export function wireCodeAndCategory (bytes: Buffer, start: number, into: WireCodeAndCategory): void {
  const codeStart = wireCodeStart(bytes, start)
  const codeEnd = wireCodeEnd
  let hash = IDENTIFIER_HASH_SEED
  for (let i = codeStart; i < codeEnd; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  into.code = remembered.text(bytes, codeStart, codeEnd, hash)
  into.category = bytes[codeEnd + CATEGORY_KEY.length] === ALERT[0] ? 'alert' : 'notification'
}

/** Codes up to this many are compared byte by byte; more are looked up in a set by their text. */
const CODES_COMPARED = 8

/**
 * A query's message codes or category as the plain wire form holds them: whether an event may
 * answer them, told from its bytes without making its message. The memory store makes an event's
 * message the first time an answer reads it and keeps it, so a scan that made every candidate's
 * to check its code made and kept the message of every event of the window: a year's scan for a
 * rare code on a million events held the event loop 2.4 s the first time (scratch, 2026-11-28).
 * An event is made only if it may match; the usual check follows on its message.
 */
export class WireExclusiveFilter {
  /** The codes' bytes (a code that is not printable ASCII is never a wire event's), or undefined when there are many. */
  readonly #codeBytes: Buffer[] | undefined
  readonly #codes: ReadonlySet<string> | undefined
  /** The category's first byte: `a` for alert, `n` for notification. */
  readonly #category: number | undefined

  private constructor (codes: ReadonlySet<string> | undefined, category: Message['message_category'] | undefined) {
    this.#codes = codes
    this.#codeBytes = codes === undefined || codes.size > CODES_COMPARED
      ? undefined
      : [...codes].filter((code) => /^[\x20-\x7e]*$/.test(code)).map((code) => Buffer.from(code, 'latin1'))
    this.#category = category?.charCodeAt(0)
  }

  /** The filter of a query's codes or category; undefined when it has neither. */
  static of (codes: ReadonlySet<string> | undefined, category: Message['message_category'] | undefined): WireExclusiveFilter | undefined {
    return codes === undefined && category === undefined ? undefined : new WireExclusiveFilter(codes, category)
  }

  /** Whether the event whose JSON in the plain wire form begins at bytes[start] may answer the filter (false only when it cannot). */
  mayMatch (bytes: Buffer, start: number): boolean {
    const codeStart = wireCodeStart(bytes, start)
    const codeEnd = wireCodeEnd
    if (this.#category !== undefined) return bytes[codeEnd + CATEGORY_KEY.length] === this.#category
    const codeBytes = this.#codeBytes
    if (codeBytes === undefined) return this.#codes!.has(bytes.toString('latin1', codeStart, codeEnd))
    const length = codeEnd - codeStart
    for (let c = 0; c < codeBytes.length; c++) {
      const code = codeBytes[c]!
      if (code.length !== length) continue
      let i = 0
      while (i < length && bytes[codeStart + i] === code[i]) i++
      if (i === length) return true
    }
    return false
  }
}
