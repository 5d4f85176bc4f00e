import type { Message } from '../../../schemas/message.js'
import { sameEvent } from '../../data/event-lines.js'
import { intern } from '../../data/intern.js'
import { compareMessageIds } from '../event-order.js'
import { entityNumber } from '../../data/entity-numbers.js'
import type { JsonBytes } from '../../data/json-bytes.js'
import { scanWireLine, wireMessage, wireMessageIdEnd, WIRE_MESSAGE_ID_START, type WireParts } from '../../data/wire-line.js'
import { PagesAhead } from './prefaulted-buffers.js'
import { MemorySegment } from './memory-segment.js'
import { MessageIdTable, messageIdHash, messageIdHashOfFnv } from './message-id-table.js'

/**
 * The first segment, built as a file's events are read: each event's wire JSON goes straight into
 * one buffer, its time into a typed array, its message_id into the index the segment keeps. A
 * file already in answer order (every file the provider writes, and the generator's) is then
 * the segment as it is; another is put in order once at the end. Loading a million events this
 * way leaves little garbage: no per-event wrapper, no array of them, no second encoding.
 *
 * A line in the plain wire form (addWire, the usual case) is kept as its bytes and numbers only:
 * its message object is made when an answer first reads it (MemorySegment's SegmentParts). Making
 * a million of them at load, with their message_id and date_time strings, was most of the load's
 * time with the collector's share, and 300 bytes an event of memory (BENCHMARKS.md, "What
 * profiling found").
 */
export class SegmentBuilder {
  /** Undefined for a line kept as its bytes (addWire). */
  readonly #messages: Array<Message | undefined> = []
  #times: Float64Array
  #lines: Uint32Array
  #offsets: Uint32Array
  /** The facts the segment's indexes are built from (entity-numbers.ts; -1: none). */
  #deviceNumbers: Int32Array
  #spaceNumbers: Int32Array
  #json: Buffer
  #length = 0
  /**
   * Gives #json's pages ahead of the lines being added: made by beforeLines (a builder never told
   * of its lines has none) for the #json of the time, dropped when #json is replaced.
   */
  #ahead: PagesAhead | undefined
  /** What the lines being added may fill of #json: where reads of the zero file may be on their way, after it. */
  #claimed = 0
  readonly #byMessageId: MessageIdTable
  #inOrder = true

  /** `expectedBytes`: about the size of the events' JSON (the file's size), to allocate once. */
  constructor (expectedBytes: number) {
    const expectedEvents = Math.max(16, Math.ceil(expectedBytes / 128))
    this.#times = new Float64Array(expectedEvents)
    this.#lines = new Uint32Array(expectedEvents)
    this.#offsets = new Uint32Array(expectedEvents + 1)
    this.#deviceNumbers = new Int32Array(expectedEvents)
    this.#spaceNumbers = new Int32Array(expectedEvents)
    this.#json = Buffer.allocUnsafe(Math.max(1024, expectedBytes))
    this.#byMessageId = new MessageIdTable((position) => this.#idAt(position), expectedEvents)
  }

  /**
   * Adds an event, with its wire JSON (copied at once: `json` may be reused) and the line it came
   * from. The same message_id again with the same fields is the same event, kept once; with
   * other fields, the problem is returned.
   */
  add (message: Message, epochMs: number, json: JsonBytes, line: number): string | undefined {
    const id = message.message_id
    const hash = messageIdHash(id)
    const earlier = this.#byMessageId.get(id, hash)
    if (earlier !== -1) return this.#again(earlier, message, line)
    message.message_code = intern(message.message_code)
    // Checked already to be one of the two: the literals are the interned strings.
    message.message_category = message.message_category === 'alert' ? 'alert' : 'notification'
    if (message.device_id !== undefined) message.device_id = intern(message.device_id)
    if (message.space_id !== undefined) message.space_id = intern(message.space_id)
    const position = this.#place(epochMs, id, hash, line, message.device_id, message.space_id)
    this.#messages.push(message)
    this.#copy(json.bytes, json.start, json.end, position)
    return undefined
  }

  /**
   * Adds the event of a line in the plain wire form, bytes[start, end), whose parts scanWireParts
   * read: kept as its bytes, its message made when it is first read. As add otherwise.
   */
  addWire (bytes: Buffer, start: number, end: number, wire: WireParts, line: number): string | undefined {
    const { idStart, idEnd } = wire
    const hash = messageIdHashOfFnv(wire.idFnv)
    const earlier = this.#byMessageId.find(hash, () => bytes.toString('latin1', idStart, idEnd))
    // Rare (the same event twice): its message is made to compare (before the earlier one is, which scans again).
    if (earlier !== -1) return this.#again(earlier, wireMessage(bytes, wire), line)
    const position = this.#place(wire.epochMs, undefined, hash, line, wire.deviceId, wire.spaceId, bytes, idStart, idEnd)
    this.#messages.push(undefined)
    this.#copy(bytes, start, end, position)
    return undefined
  }

  /**
   * Lines of about `bytes` are about to be added: resolves once #json's room for them is no
   * read's (undefined at once when it is none's already), and has the pages after them given.
   */
  beforeLines (bytes: number): Promise<void> | undefined {
    const ahead = this.#ahead ??= new PagesAhead(this.#json)
    // A line's wire JSON is at most 4 bytes longer than the line (a date-time without
    // milliseconds), and a line is longer than 80 bytes: a quarter more is room enough.
    this.#claimed = this.#length + Math.ceil(1.25 * bytes) + 4096
    return ahead.claim(this.#claimed)
  }

  get size (): number {
    return this.#messages.length
  }

  /** The segment of every event added, in answer order. */
  build (): MemorySegment {
    const count = this.#messages.length
    const times = this.#times.subarray(0, count)
    const offsets = this.#offsets.subarray(0, count + 1)
    const numbers = { deviceNumbers: this.#deviceNumbers.subarray(0, count), spaceNumbers: this.#spaceNumbers.subarray(0, count) }
    // Copied to its own size when much of it is spare (it stays allocated for the store's life);
    // for a file in wire form the spare part is about its newlines.
    const used = this.#json.subarray(0, this.#length)
    const json = this.#length < 0.9 * this.#json.length ? Buffer.from(used) : used
    if (!this.#inOrder) return this.#ordered(times, offsets, json, numbers)
    // The message_id index reads IDs through this builder (#idAt): from now on, from the segment's own arrays.
    this.#times = times.slice()
    this.#offsets = offsets.slice()
    this.#json = json
    this.#lines = new Uint32Array(0)
    this.#deviceNumbers = numbers.deviceNumbers.slice()
    this.#spaceNumbers = numbers.spaceNumbers.slice()
    return new MemorySegment([], {
      messages: this.#messages,
      times: this.#times,
      json,
      offsets: this.#offsets,
      byMessageId: this.#byMessageId,
      numbers: { deviceNumbers: this.#deviceNumbers, spaceNumbers: this.#spaceNumbers }
    })
  }

  /** The problem of an event whose message_id an earlier one has (none when it is the same event). */
  #again (earlier: number, message: Message, line: number): string | undefined {
    return sameEvent(this.#messageOf(earlier), message) ? undefined : `message_id ${JSON.stringify(message.message_id)} was already used by line ${this.#lines[earlier]} for a different event`
  }

  /**
   * A new event's place: its time, line, entities' numbers and message_id index entry; whether
   * the events are still in answer order. `id` is its message_id, or undefined when it is still
   * bytes[idStart, idEnd) (made a string only if its time equals the last event's).
   */
  #place (epochMs: number, id: string | undefined, hash: number, line: number, deviceId: string | undefined, spaceId: string | undefined, bytes?: Buffer, idStart = 0, idEnd = 0): number {
    const position = this.#messages.length
    if (position === this.#times.length) this.#grow()
    if (this.#inOrder && position > 0) {
      const last = this.#times[position - 1]!
      this.#inOrder = epochMs > last || (epochMs === last && compareMessageIds(this.#idAt(position - 1), id ?? bytes!.toString('latin1', idStart, idEnd)) < 0)
    }
    this.#byMessageId.addHashed(hash, position)
    this.#times[position] = epochMs
    this.#lines[position] = line
    this.#deviceNumbers[position] = deviceId === undefined ? -1 : entityNumber(deviceId)
    this.#spaceNumbers[position] = spaceId === undefined ? -1 : entityNumber(spaceId)
    return position
  }

  /** Copies an event's JSON after the last one's. */
  #copy (bytes: Buffer, start: number, end: number, position: number): void {
    const room = end - start
    // Past what was claimed (a line longer in wire form than beforeLines allowed for, or lines
    // added without it), a read of the zero file may be on its way: other memory is used.
    if (this.#length + room > this.#json.length || (this.#ahead !== undefined && this.#length + room > this.#claimed)) this.#growJson(this.#length + room)
    this.#length += bytes.copy(this.#json, this.#length, start, end)
    this.#offsets[position + 1] = this.#length
  }

  /** The message_id of an event added, read from its JSON when it was kept as bytes. */
  #idAt (position: number): string {
    const message = this.#messages[position]
    if (message !== undefined) return message.message_id
    const start = this.#offsets[position]!
    return this.#json.toString('latin1', start + WIRE_MESSAGE_ID_START, wireMessageIdEnd(this.#json, start))
  }

  /** The message of an event added, made from its JSON when it was kept as bytes (not kept: this is rare). */
  #messageOf (position: number): Message {
    return this.#messages[position] ?? scanWireLine(this.#json, this.#offsets[position]!, this.#offsets[position + 1]!)!.message
  }

  /** The events sorted into answer order (date_time, then message_id), with their JSON moved along. */
  #ordered (times: Float64Array, offsets: Uint32Array, json: Buffer, numbers: { deviceNumbers: Int32Array, spaceNumbers: Int32Array }): MemorySegment {
    const messages = this.#messages
    const count = messages.length
    const order = new Uint32Array(count)
    for (let i = 0; i < count; i++) order[i] = i
    order.sort((a, b) => times[a]! !== times[b]! ? times[a]! - times[b]! : compareMessageIds(this.#idAt(a), this.#idAt(b)))
    const sortedMessages: Array<Message | undefined> = new Array(count)
    const sortedTimes = new Float64Array(count)
    const sortedOffsets = new Uint32Array(count + 1)
    const deviceNumbers = new Int32Array(count)
    const spaceNumbers = new Int32Array(count)
    const sortedJson = Buffer.allocUnsafe(json.length)
    let bytes = 0
    for (let i = 0; i < count; i++) {
      const from = order[i]!
      sortedMessages[i] = messages[from]
      sortedTimes[i] = times[from]!
      deviceNumbers[i] = numbers.deviceNumbers[from]!
      spaceNumbers[i] = numbers.spaceNumbers[from]!
      bytes += json.copy(sortedJson, bytes, offsets[from]!, offsets[from + 1]!)
      sortedOffsets[i + 1] = bytes
    }
    return new MemorySegment([], { messages: sortedMessages, times: sortedTimes, json: sortedJson, offsets: sortedOffsets, numbers: { deviceNumbers, spaceNumbers } })
  }

  #grow (): void {
    const capacity = this.#times.length * 2
    this.#times = grown(this.#times, new Float64Array(capacity))
    this.#lines = grown(this.#lines, new Uint32Array(capacity))
    this.#offsets = grown(this.#offsets, new Uint32Array(capacity + 1))
    this.#deviceNumbers = grown(this.#deviceNumbers, new Int32Array(capacity))
    this.#spaceNumbers = grown(this.#spaceNumbers, new Int32Array(capacity))
  }

  #growJson (atLeast: number): void {
    const json = Buffer.allocUnsafe(Math.max(atLeast, atLeast > this.#json.length ? this.#json.length * 2 : this.#json.length))
    this.#ahead = undefined
    this.#json.copy(json, 0, 0, this.#length)
    this.#json = json
  }
}

/** `larger`, holding `array`'s values first. */
function grown<T extends Float64Array | Uint32Array | Int32Array> (array: T, larger: T): T {
  larger.set(array)
  return larger
}
