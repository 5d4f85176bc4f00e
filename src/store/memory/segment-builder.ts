import type { Message } from '../../../schemas/message.js'
import { sameEvent } from '../../data/event-lines.js'
import { intern } from '../../data/intern.js'
import { compareMessageIds } from '../event-order.js'
import { copyJsonBytes, type JsonBytes } from '../../data/json-bytes.js'
import { MemorySegment } from './memory-segment.js'
import { messageIdHash, type MessageIdTable } from './message-id-table.js'

/**
 * The first segment, built as a file's events are read: each event's wire JSON goes straight into
 * one buffer, its time into a typed array, its message_id into the index the segment keeps. A
 * file already in answer order (every file the provider writes, and the generator's) is then
 * the segment as it is; another is put in order once at the end. Loading a million events this
 * way leaves little garbage: no per-event wrapper, no array of them, no second encoding.
 */
export class SegmentBuilder {
  readonly #messages: Message[] = []
  #times: Float64Array
  #lines: Uint32Array
  #offsets: Uint32Array
  #json: Buffer
  #length = 0
  readonly #byMessageId: MessageIdTable
  #inOrder = true

  /** `expectedBytes`: about the size of the events' JSON (the file's size), to allocate once. */
  constructor (expectedBytes: number) {
    const expectedEvents = Math.max(16, Math.ceil(expectedBytes / 128))
    this.#times = new Float64Array(expectedEvents)
    this.#lines = new Uint32Array(expectedEvents)
    this.#offsets = new Uint32Array(expectedEvents + 1)
    this.#json = Buffer.allocUnsafe(Math.max(1024, expectedBytes))
    this.#byMessageId = MemorySegment.messageIdTable(this.#messages, expectedEvents)
  }

  /**
   * Adds an event, with its wire JSON (copied at once: `json` may be reused) and the line it came
   * from. The same message_id again with the same fields is the same event, kept once; with
   * other fields, the problem is returned.
   */
  add (message: Message, epochMs: number, json: JsonBytes, line: number): string | undefined {
    const messages = this.#messages
    const id = message.message_id
    const hash = messageIdHash(id)
    const earlier = this.#byMessageId.get(id, hash)
    if (earlier !== -1) {
      return sameEvent(messages[earlier]!, message) ? undefined : `message_id ${JSON.stringify(id)} was already used by line ${this.#lines[earlier]} for a different event`
    }
    const position = messages.length
    if (position === this.#times.length) this.#grow()
    message.message_code = intern(message.message_code)
    // Checked already to be one of the two: the literals are the interned strings.
    message.message_category = message.message_category === 'alert' ? 'alert' : 'notification'
    if (message.device_id !== undefined) message.device_id = intern(message.device_id)
    if (message.space_id !== undefined) message.space_id = intern(message.space_id)
    if (this.#inOrder && position > 0) {
      const last = this.#times[position - 1]!
      this.#inOrder = epochMs > last || (epochMs === last && compareMessageIds(messages[position - 1]!.message_id, id) < 0)
    }
    messages.push(message)
    this.#byMessageId.add(id, position, hash)
    this.#times[position] = epochMs
    this.#lines[position] = line
    const room = json.end - json.start
    if (this.#length + room > this.#json.length) this.#growJson(this.#length + room)
    this.#length = copyJsonBytes(json, this.#json, this.#length)
    this.#offsets[position + 1] = this.#length
    return undefined
  }

  get size (): number {
    return this.#messages.length
  }

  /** The segment of every event added, in answer order. */
  build (): MemorySegment {
    const count = this.#messages.length
    const times = this.#times.subarray(0, count)
    const offsets = this.#offsets.subarray(0, count + 1)
    // Copied to its own size when much of it is spare (it stays allocated for the store's life);
    // for a file in wire form the spare part is about its newlines.
    const used = this.#json.subarray(0, this.#length)
    const json = this.#length < 0.9 * this.#json.length ? Buffer.from(used) : used
    if (this.#inOrder) return new MemorySegment([], { messages: this.#messages, times: times.slice(), json, offsets: offsets.slice(), byMessageId: this.#byMessageId })
    return this.#ordered(times, offsets, json)
  }

  /** The events sorted into answer order (date_time, then message_id), with their JSON moved along. */
  #ordered (times: Float64Array, offsets: Uint32Array, json: Buffer): MemorySegment {
    const messages = this.#messages
    const count = messages.length
    const order = new Uint32Array(count)
    for (let i = 0; i < count; i++) order[i] = i
    order.sort((a, b) => times[a]! !== times[b]! ? times[a]! - times[b]! : compareMessageIds(messages[a]!.message_id, messages[b]!.message_id))
    const sortedMessages: Message[] = new Array(count)
    const sortedTimes = new Float64Array(count)
    const sortedOffsets = new Uint32Array(count + 1)
    const sortedJson = Buffer.allocUnsafe(json.length)
    let bytes = 0
    for (let i = 0; i < count; i++) {
      const from = order[i]!
      sortedMessages[i] = messages[from]!
      sortedTimes[i] = times[from]!
      bytes += json.copy(sortedJson, bytes, offsets[from]!, offsets[from + 1]!)
      sortedOffsets[i + 1] = bytes
    }
    return new MemorySegment([], { messages: sortedMessages, times: sortedTimes, json: sortedJson, offsets: sortedOffsets })
  }

  #grow (): void {
    const capacity = this.#times.length * 2
    const times = new Float64Array(capacity)
    times.set(this.#times)
    this.#times = times
    const lines = new Uint32Array(capacity)
    lines.set(this.#lines)
    this.#lines = lines
    const offsets = new Uint32Array(capacity + 1)
    offsets.set(this.#offsets)
    this.#offsets = offsets
  }

  #growJson (atLeast: number): void {
    const json = Buffer.allocUnsafe(Math.max(atLeast, this.#json.length * 2))
    this.#json.copy(json, 0, 0, this.#length)
    this.#json = json
  }
}
