import type { Message } from '../../../schemas/message.js'
import { messageIdOf, type StoredEvent } from '../../data/event-lines.js'
import { entityIdOf, entityNumber } from '../../data/entity-numbers.js'
import { intern } from '../../data/intern.js'
import { compareMessageIds } from '../event-order.js'
import { EVENT_BATCH_SIZE, type EventBatch, type EventFacts, type EventQuery, type StoredEntities } from '../event-store.js'
import { encodeMessageList } from '../message-json.js'
import { isOfNumberedQuery, matchesExclusiveFilter, matchesFilters, numberedQuery } from '../store-contract.js'
import { copyJsonBytes, joinJsonBytes, type JsonBytes } from '../../data/json-bytes.js'
import { messageOfWireJson, wireCodeAndCategory, wireMessageIdEnd, WireEvent, WireExclusiveFilter, WIRE_MESSAGE_ID_START, type WireCodeAndCategory } from '../../data/wire-line.js'
import { MessageIdTable, messageIdHash, messageIdHashOfBytes } from './message-id-table.js'
import { PrefaultedBuffers } from './prefaulted-buffers.js'

/**
 * A segment's parts, in answer order (see MemorySegment.merge and SegmentBuilder). A message may
 * be undefined when its JSON is in the plain wire form (wire-line.ts): it is made from its JSON
 * the first time it is read, and kept. The loaded segment's million events then cost no message
 * object, no strings and no collector's work until an answer reads them (SegmentBuilder).
 */
export interface SegmentParts {
  messages: Array<Message | undefined>
  times: Float64Array
  json: Buffer
  offsets: Uint32Array
  /**
   * How many events are the segment's: the first `size` of `messages` (the arrays of a segment
   * that shares its storage with later ones, see MemorySegment.append, are longer); default all.
   */
  size?: number
  /** The storage the segment's arrays are views of, with room after them (MemorySegment.append). */
  room?: SharedRoom
  /** The message_id index, when its maker already has it (positions in this order; it reads each ID through its maker). */
  byMessageId?: MessageIdTable
  /**
   * Build the indexes when a query first needs them, not now: for an ingest's segments, most of
   * which are merged into larger ones before any query reads them (indexing every new and every
   * merged segment at once was a sixth of an ingest's time).
   */
  lazyIndexes?: boolean
  /**
   * The events' device and space numbers (EventFacts), when its maker has them: the indexes are
   * then built from them, without reading any message.
   */
  numbers?: { deviceNumbers: Int32Array, spaceNumbers: Int32Array } | undefined
}

/**
 * The storage of segments built by appending (MemorySegment.append): arrays and a buffer larger
 * than the events they hold, shared by each segment appended and the one it was appended to. Each
 * segment reads only its first `size` events, so writing after them changes nothing it sees.
 */
interface SharedRoom {
  messages: Array<Message | undefined>
  times: Float64Array
  offsets: Uint32Array
  json: Buffer
  /** The events' facts (EventFacts), so that no segment on the room reads a message to index or check them. */
  deviceNumbers: Int32Array
  spaceNumbers: Int32Array
  /** Events written so far: the newest segment's size (only that one may be appended to). */
  used: number
}

/** Whether event i of a comes before event j of b in answer order. */
function comesFirst (a: MemorySegment, i: number, b: MemorySegment, j: number): boolean {
  return a.timeAt(i) < b.timeAt(j) || (a.timeAt(i) === b.timeAt(j) && compareMessageIds(a.idAt(i), b.idAt(j)) < 0)
}

function byTimeThenId (a: StoredEvent, b: StoredEvent): number {
  return a.epochMs !== b.epochMs ? a.epochMs - b.epochMs : compareMessageIds(messageIdOf(a), messageIdOf(b))
}

/**
 * What a segment keeps of an ingested event: nothing for one read from a line in wire form (its
 * message is made from the segment's bytes when an answer first reads it, as for the loaded
 * events), the message in its stored form otherwise.
 */
function keptMessage (event: StoredEvent): Message | undefined {
  return event instanceof WireEvent ? undefined : storedForm(event.message)
}

/** The device's and the space's numbers of an event (-1: none), without making a WireEvent's message. */
function numberEntitiesOf (event: StoredEvent, position: number, deviceNumbers: Int32Array, spaceNumbers: Int32Array): void {
  if (event instanceof WireEvent) {
    deviceNumbers[position] = event.deviceNumber
    spaceNumbers[position] = event.spaceNumber
    return
  }
  const { device_id: deviceId, space_id: spaceId } = event.message
  deviceNumbers[position] = deviceId === undefined ? -1 : entityNumber(deviceId)
  spaceNumbers[position] = spaceId === undefined ? -1 : entityNumber(spaceId)
}

/**
 * An immutable part of the memory store (memory-event-store.ts): events in date_time then
 * message_id order, with their time in a flat array for binary search, and indexes by device and
 * by space (a device's events are also indexed under the space they happened in) and by
 * message_id. The indexes hold positions in that order, not objects: typed arrays outside the V8
 * heap, and one order to merge them by. The heap holds little more than the messages, since every
 * young-generation GC walks its pages. The events loaded at start-up are one segment; each
 * ingest adds a small one.
 */
export class MemorySegment {
  /** Undefined where the message is not made yet (SegmentParts): read through #messageAt. */
  readonly #messages: Array<Message | undefined>
  readonly #size: number
  readonly #room: SharedRoom | undefined
  readonly #times: Float64Array
  /** Every message's wire JSON, in one buffer, handed over with the answers. */
  readonly #json: Buffer
  readonly #jsonOffsets: Uint32Array
  /** The device and space indexes, and the message_id index; undefined until built (SegmentParts.lazyIndexes). */
  #byDevice: Map<string, Uint32Array> | undefined
  #bySpace: Map<string, Uint32Array> | undefined
  #byMessageIdIndex: MessageIdTable | undefined
  /** What the store contract checks, by number (EventFacts); built with the indexes, or when an answer first needs them. */
  #eventFacts: EventFacts | undefined
  /**
   * The events' positions by message code and by category, built the first time a query asks for
   * codes or a category without entities (#exclusiveIndexes): such a query looks at the events it
   * names only, where it read every event of its window (a rare code over a year of a million
   * events: 120–160 ms, every time).
   */
  #byCode: Map<string, Uint32Array> | undefined
  #byCategory: Map<string, Uint32Array> | undefined
  /** The code and category indexes as far as they are built (buildExclusiveIndexes), until they are. */
  #exclusiveBuild: { next: number, codeLists: Map<string, number[]>, alerts: number[], notifications: number[] } | undefined

  /**
   * Every event is kept, also those of entities the registry does not list (yet): which entities
   * are served is decided per answer, above the store (store-contract.ts). `merged` is for
   * MemorySegment.merge: its parts, already in order and encoded.
   */
  constructor (events: Iterable<StoredEvent>, merged?: SegmentParts) {
    if (merged !== undefined) {
      this.#messages = merged.messages
      this.#size = merged.size ?? merged.messages.length
      this.#room = merged.room
      this.#times = merged.times
      this.#json = merged.json
      this.#jsonOffsets = merged.offsets
      this.#byMessageIdIndex = merged.byMessageId
      if (merged.numbers !== undefined) this.#eventFacts = { epochMs: this.#times, ...merged.numbers }
      if (merged.lazyIndexes !== true) this.#index()
      return
    }
    const all: StoredEvent[] = []
    for (const event of events) {
      const message = event.message
      message.message_code = intern(message.message_code)
      message.message_category = intern(message.message_category) as Message['message_category']
      if (message.device_id !== undefined) message.device_id = intern(message.device_id)
      if (message.space_id !== undefined) message.space_id = intern(message.space_id)
      // The same text as the parsed form, but one flat string instead of a concatenation tree.
      message.date_time = new Date(event.epochMs).toISOString()
      all.push(event)
    }
    all.sort(byTimeThenId)
    this.#messages = all.map((event) => event.message)
    this.#size = this.#messages.length
    this.#room = undefined
    this.#times = Float64Array.from(all, (event) => event.epochMs)
    const encoded = encodeMessageList(all.map((event) => event.message))
    this.#json = encoded.bytes
    this.#jsonOffsets = encoded.offsets
    this.#index()
  }

  /** Events in answer order: as they are when they come in order (a live ingest's usually do), else sorted. */
  static inAnswerOrder<T extends { readonly event: StoredEvent }> (events: readonly T[]): readonly T[] {
    for (let i = 1; i < events.length; i++) {
      if (byTimeThenId(events[i - 1]!.event, events[i]!.event) > 0) return [...events].sort((a, b) => byTimeThenId(a.event, b.event))
    }
    return events
  }

  /**
   * A segment of events whose wire JSON is already made (an ingest's: see IngestEvent.json), in
   * answer order, without encoding them again: their bytes copied as they are.
   */
  static fromEncoded (events: ReadonlyArray<{ readonly event: StoredEvent, readonly json: JsonBytes }>): MemorySegment {
    const ordered = MemorySegment.inAnswerOrder(events)
    const count = ordered.length
    const messages: Array<Message | undefined> = new Array(count)
    const times = new Float64Array(count)
    const deviceNumbers = new Int32Array(count)
    const spaceNumbers = new Int32Array(count)
    const pieces: JsonBytes[] = new Array(count)
    for (let i = 0; i < count; i++) {
      const { event, json } = ordered[i]!
      messages[i] = keptMessage(event)
      times[i] = event.epochMs
      numberEntitiesOf(event, i, deviceNumbers, spaceNumbers)
      pieces[i] = json
    }
    const { bytes: json, offsets } = joinJsonBytes(pieces, false)
    return new MemorySegment([], { messages, times, json, offsets, lazyIndexes: true, numbers: { deviceNumbers, spaceNumbers } })
  }

  /**
   * Events whose wire JSON is made (in answer order) after a's, as one segment, written straight
   * into the room after a's events (MemorySegment.append; a new room when there is none, or too
   * little): an ingest's bytes go to their place in the store without a segment of their own
   * first, whose fresh memory the kernel had to fault in page by page only to be copied once
   * more. undefined when the events do not all come after a's.
   */
  static appendEncoded (a: MemorySegment | undefined, events: ReadonlyArray<{ readonly event: StoredEvent, readonly json: JsonBytes }>, expectedSize = 0): MemorySegment | undefined {
    const base = a ?? EMPTY
    if (base.size > 0 && events.length > 0) {
      // After the last event: by time, and by message_id only when the times are equal.
      const lastMs = base.#times[base.size - 1]!
      const { event: first } = events[0]!
      if (first.epochMs < lastMs || (first.epochMs === lastMs && compareMessageIds(base.#idAt(base.size - 1), messageIdOf(first)) >= 0)) return undefined
    }
    const size = base.size + events.length
    const baseBytes = base.#jsonOffsets[base.size]!
    let bytes = 0
    for (let i = 0; i < events.length; i++) bytes += events[i]!.json.end - events[i]!.json.start
    const room = MemorySegment.#roomFor(base, size, baseBytes + bytes, expectedSize)
    let end = baseBytes
    for (let i = 0; i < events.length; i++) {
      end = copyJsonBytes(events[i]!.json, room.json, end)
      room.offsets[base.size + i + 1] = end
    }
    const { messages, times, deviceNumbers, spaceNumbers } = room
    for (let k = 0; k < events.length; k++) {
      const { event } = events[k]!
      messages.push(keptMessage(event))
      times[base.size + k] = event.epochMs
      numberEntitiesOf(event, base.size + k, deviceNumbers, spaceNumbers)
    }
    return MemorySegment.#claim(room, size, end)
  }

  /**
   * Two segments as one, in answer order, without encoding or sorting again: a merge of the two
   * orders, copying each run of events' JSON bytes from the segment it comes from (ingests merge
   * their small segments as they come; encoding them again each time was most of an ingest).
   */
  static merge (a: MemorySegment, b: MemorySegment): MemorySegment {
    const total = a.size + b.size
    const messages: Array<Message | undefined> = new Array(total)
    const times = new Float64Array(total)
    const offsets = new Uint32Array(total + 1)
    const deviceNumbers = new Int32Array(total)
    const spaceNumbers = new Int32Array(total)
    const json = Buffer.allocUnsafe(a.#jsonOffsets[a.size]! + b.#jsonOffsets[b.size]!)
    let i = 0
    let j = 0
    let out = 0
    let bytes = 0
    // Copies events [from, to) of one segment: their bytes in one piece.
    const take = (segment: MemorySegment, from: number, to: number) => {
      const start = segment.#jsonOffsets[from]!
      segment.#json.copy(json, bytes, start, segment.#jsonOffsets[to]!)
      const facts = segment.#facts()
      deviceNumbers.set(facts.deviceNumbers.subarray(from, to), out)
      spaceNumbers.set(facts.spaceNumbers.subarray(from, to), out)
      for (let k = from; k < to; k++) {
        // As it is (a message not made yet is made from the same bytes, copied along).
        messages[out] = segment.#messages[k]
        times[out] = segment.#times[k]!
        offsets[out + 1] = bytes + segment.#jsonOffsets[k + 1]! - start
        out++
      }
      bytes = offsets[out]!
    }
    while (i < a.size || j < b.size) {
      const runStart = i
      while (i < a.size && (j >= b.size || comesFirst(a, i, b, j))) i++
      if (i > runStart) take(a, runStart, i)
      const otherStart = j
      while (j < b.size && (i >= a.size || !comesFirst(a, i, b, j))) j++
      if (j > otherStart) take(b, otherStart, j)
    }
    return new MemorySegment([], { messages, times, json, offsets, lazyIndexes: a.#byDevice === undefined || b.#byDevice === undefined, numbers: { deviceNumbers, spaceNumbers } })
  }

  /**
   * b's events after a's, as one segment, when b comes wholly after a in answer order (the usual
   * case of a live ingest, whose events are recent); undefined otherwise (MemorySegment.merge then
   * puts them in order). Only b's events are copied, into room left after a's: a merge copies
   * both, so each ingested event was copied again at every merge of its segment, an eighth of an
   * ingest's time (BENCHMARKS.md, "What profiling found"). The room doubles when it runs out.
   * a stays as it was: it reads only its own events.
   */
  static append (a: MemorySegment, b: MemorySegment, expectedSize = 0): MemorySegment | undefined {
    if (a.size > 0 && b.size > 0 && !comesFirst(a, a.size - 1, b, 0)) return undefined
    const size = a.size + b.size
    const aBytes = a.#jsonOffsets[a.size]!
    const bytes = aBytes + b.#jsonOffsets[b.size]!
    const room = MemorySegment.#roomFor(a, size, bytes, expectedSize)
    const { messages, times, offsets } = room
    b.#json.copy(room.json, aBytes, 0, b.#jsonOffsets[b.size]!)
    times.set(b.#times.subarray(0, b.size), a.size)
    const facts = b.#facts()
    room.deviceNumbers.set(facts.deviceNumbers.subarray(0, b.size), a.size)
    room.spaceNumbers.set(facts.spaceNumbers.subarray(0, b.size), a.size)
    for (let k = 0; k < b.size; k++) {
      messages.push(b.#messages[k])
      offsets[a.size + k + 1] = aBytes + b.#jsonOffsets[k + 1]!
    }
    return MemorySegment.#claim(room, size, bytes)
  }

  /** The segment of the room's first `size` events (`bytes` of JSON), the newest on it from now on. */
  static #claim (room: SharedRoom, size: number, bytes: number): MemorySegment {
    room.used = size
    return new MemorySegment([], {
      messages: room.messages,
      size,
      room,
      times: room.times.subarray(0, size),
      json: room.json.subarray(0, bytes),
      offsets: room.offsets.subarray(0, size + 1),
      lazyIndexes: true,
      numbers: { deviceNumbers: room.deviceNumbers.subarray(0, size), spaceNumbers: room.spaceNumbers.subarray(0, size) }
    })
  }

  /**
   * a's room, when a is the newest segment on it and it has space for `size` events of `bytes`;
   * otherwise a new one holding a copy of a's events: sized for what the caller expects the
   * segment to grow to (pages never written to are never given memory), or twice this one.
   */
  static #roomFor (a: MemorySegment, size: number, bytes: number, expectedSize: number): SharedRoom {
    const room = a.#room
    if (room !== undefined && room.used === a.size && room.times.length >= size && room.json.length >= bytes) {
      // As long as a's events (an append cut short by a defect may have pushed more).
      room.messages.length = a.size
      return room
    }
    const events = expectedSize > 0 ? Math.max(size, expectedSize) : Math.max(1024, 2 * size)
    const aBytes = a.#jsonOffsets[a.size]!
    // Bytes for the expected events at this group's size an event, but at most ROOM_ESTIMATE_MAX
    // (one group of long events must not reserve for thousands more like them); twice these
    // bytes when that is more, but at most ROOM_ESTIMATE_MAX more.
    const estimate = Math.min(ROOM_ESTIMATE_MAX, Math.ceil(1.25 * (bytes / Math.max(1, size)) * expectedSize))
    const fresh: SharedRoom = {
      messages: a.#messages.slice(0, a.size),
      times: new Float64Array(events),
      offsets: new Uint32Array(events + 1),
      // What the expected events will likely fill is given its pages ahead, off the event loop.
      json: roomBuffers.take(Math.max(256 * 1024, Math.min(2 * bytes, bytes + ROOM_ESTIMATE_MAX), estimate), Math.ceil((bytes / Math.max(1, size)) * events)),
      deviceNumbers: new Int32Array(events),
      spaceNumbers: new Int32Array(events),
      used: a.size
    }
    fresh.times.set(a.#times.subarray(0, a.size))
    if (a.size > 0) {
      const facts = a.#facts()
      fresh.deviceNumbers.set(facts.deviceNumbers.subarray(0, a.size))
      fresh.spaceNumbers.set(facts.spaceNumbers.subarray(0, a.size))
    }
    fresh.offsets.set(a.#jsonOffsets.subarray(0, a.size + 1))
    a.#json.copy(fresh.json, 0, 0, aBytes)
    return fresh
  }

  /** The device and space indexes of the events in order, and the message_id index unless given. */
  #index (): { byDevice: Map<string, Uint32Array>, bySpace: Map<string, Uint32Array>, byMessageId: MessageIdTable } {
    const size = this.#size
    let byMessageId = this.#byMessageIdIndex
    if (byMessageId === undefined) {
      byMessageId = new MessageIdTable((position) => this.#messageAt(position).message_id, size)
      for (let position = 0; position < size; position++) byMessageId.addHashed(this.#messageIdHashAt(position), position)
    }
    let byDevice: Map<string, Uint32Array>
    let bySpace: Map<string, Uint32Array>
    const numbered = this.#eventFacts
    if (numbered !== undefined) {
      // From the numbers its maker gave (or made before): no message is read.
      byDevice = positionsByEntity(numbered.deviceNumbers, size)
      bySpace = positionsByEntity(numbered.spaceNumbers, size)
    } else {
      const byDeviceLists = new Map<string, number[]>()
      const bySpaceLists = new Map<string, number[]>()
      const append = (map: Map<string, number[]>, key: string, position: number) => {
        const list = map.get(key)
        if (list === undefined) map.set(key, [position])
        else list.push(position)
      }
      for (let position = 0; position < size; position++) {
        const { device_id: deviceId, space_id: spaceId } = this.#messageAt(position)
        if (deviceId !== undefined) append(byDeviceLists, deviceId, position)
        if (spaceId !== undefined) append(bySpaceLists, spaceId, position)
      }
      byDevice = new Map()
      bySpace = new Map()
      for (const [id, list] of byDeviceLists) byDevice.set(id, Uint32Array.from(list))
      for (const [id, list] of bySpaceLists) bySpace.set(id, Uint32Array.from(list))
    }
    this.#byDevice = byDevice
    this.#bySpace = bySpace
    this.#byMessageIdIndex = byMessageId
    this.#facts()
    return { byDevice, bySpace, byMessageId }
  }

  /** The code and category indexes, built first if they are not yet: from the bytes of events not made, without making them. */
  #exclusiveIndexes (): { byCode: Map<string, Uint32Array>, byCategory: Map<string, Uint32Array> } {
    this.buildExclusiveIndexes(Number.POSITIVE_INFINITY)
    return { byCode: this.#byCode!, byCategory: this.#byCategory! }
  }

  /**
   * Builds the code and category indexes further, by at most `events` more events; true once
   * they are built. A store calls it a slice a turn after its load (MemoryEventStore.indexInTurns),
   * so that the first query by codes or category does not build them in one piece (a million
   * events: about 200 ms, scratch 2026-11-28); a query before they are built finishes them.
   */
  buildExclusiveIndexes (events: number): boolean {
    if (this.#byCode !== undefined) return true
    const build = this.#exclusiveBuild ??= { next: 0, codeLists: new Map<string, number[]>(), alerts: [] as number[], notifications: [] as number[] }
    const { codeLists, alerts, notifications } = build
    const json = this.#json
    const offsets = this.#jsonOffsets
    const made = this.#messages
    const fields: WireCodeAndCategory = { code: '', category: 'alert' }
    const end = Math.min(this.#size, build.next + events)
    for (let position = build.next; position < end; position++) {
      const message = made[position]
      if (message !== undefined) {
        fields.code = message.message_code
        fields.category = message.message_category
      } else {
        wireCodeAndCategory(json, offsets[position]!, fields)
      }
      const list = codeLists.get(fields.code)
      if (list === undefined) codeLists.set(fields.code, [position])
      else list.push(position)
      if (fields.category === 'alert') alerts.push(position)
      else notifications.push(position)
    }
    build.next = end
    if (end < this.#size) return false
    const byCode = new Map<string, Uint32Array>()
    for (const [code, list] of codeLists) byCode.set(code, Uint32Array.from(list))
    this.#byCategory = new Map([['alert', Uint32Array.from(alerts)], ['notification', Uint32Array.from(notifications)]])
    this.#byCode = byCode
    this.#exclusiveBuild = undefined
    return true
  }

  /** The message at a position, made from its JSON if it is not yet (SegmentParts). */
  #messageAt (position: number): Message {
    return this.#messages[position] ?? this.#made(position)
  }

  /** The message of a position whose JSON is in the plain wire form, made from it and kept. */
  #made (position: number): Message {
    const json = this.#json
    const start = this.#jsonOffsets[position]!
    const end = this.#jsonOffsets[position + 1]!
    // Only a line in the plain wire form is left unmade; the general way would read the same message.
    const message = storedForm(messageOfWireJson(json, start, end))
    this.#messages[position] = message
    return message
  }

  /** The event's message_id, read from its JSON when its message is not made (and not made for it). */
  #idAt (position: number): string {
    const message = this.#messages[position]
    if (message !== undefined) return message.message_id
    const start = this.#jsonOffsets[position]!
    return this.#json.toString('latin1', start + WIRE_MESSAGE_ID_START, wireMessageIdEnd(this.#json, start))
  }

  /** messageIdHash of the event's message_id, read from its JSON when its message is not made. */
  #messageIdHashAt (position: number): number {
    const message = this.#messages[position]
    if (message !== undefined) return messageIdHash(message.message_id)
    const start = this.#jsonOffsets[position]!
    return messageIdHashOfBytes(this.#json, start + WIRE_MESSAGE_ID_START, wireMessageIdEnd(this.#json, start))
  }

  /**
   * The facts of the events, by position: their times and their entities' numbers. From the
   * device and space indexes when they are built (a number per entity, not per event); else from
   * the messages.
   */
  #facts (): EventFacts {
    if (this.#eventFacts !== undefined) return this.#eventFacts
    const size = this.#size
    const deviceNumbers = new Int32Array(size).fill(-1)
    const spaceNumbers = new Int32Array(size).fill(-1)
    const byDevice = this.#byDevice
    const bySpace = this.#bySpace
    if (byDevice !== undefined && bySpace !== undefined) {
      for (const [id, positions] of byDevice) numberAll(deviceNumbers, positions, entityNumber(id))
      for (const [id, positions] of bySpace) numberAll(spaceNumbers, positions, entityNumber(id))
    } else {
      for (let position = 0; position < size; position++) {
        const { device_id: deviceId, space_id: spaceId } = this.#messageAt(position)
        if (deviceId !== undefined) deviceNumbers[position] = entityNumber(deviceId)
        if (spaceId !== undefined) spaceNumbers[position] = entityNumber(spaceId)
      }
    }
    this.#eventFacts = { epochMs: this.#times, deviceNumbers, spaceNumbers }
    return this.#eventFacts
  }

  /** The indexes, built first if they are not yet. */
  #indexes (): { byDevice: Map<string, Uint32Array>, bySpace: Map<string, Uint32Array>, byMessageId: MessageIdTable } {
    if (this.#byDevice !== undefined && this.#bySpace !== undefined && this.#byMessageIdIndex !== undefined) {
      return { byDevice: this.#byDevice, bySpace: this.#bySpace, byMessageId: this.#byMessageIdIndex }
    }
    return this.#index()
  }

  get size (): number {
    return this.#size
  }

  /**
   * Every event's device and space, in order, read from the facts (no message is made): one
   * object, changed for each event.
   */
  * entities (): Generator<StoredEntities> {
    const { deviceNumbers, spaceNumbers } = this.#facts()
    const entities: { device_id: string | undefined, space_id: string | undefined } = { device_id: undefined, space_id: undefined }
    for (let position = 0; position < this.#size; position++) {
      const device = deviceNumbers[position]!
      const space = spaceNumbers[position]!
      entities.device_id = device === -1 ? undefined : entityIdOf(device)
      entities.space_id = space === -1 ? undefined : entityIdOf(space)
      yield entities as StoredEntities
    }
  }

  /** How many of its events' messages are made (SegmentParts: a loaded one is made when first read). */
  get messagesMade (): number {
    let made = 0
    for (let position = 0; position < this.#size; position++) if (this.#messages[position] !== undefined) made++
    return made
  }

  /** The time of its first and last event. */
  get firstMs (): number { return this.#times[0] ?? Number.POSITIVE_INFINITY }
  get lastMs (): number { return this.#times[this.#times.length - 1] ?? Number.NEGATIVE_INFINITY }

  timeAt (position: number): number {
    return this.#times[position]!
  }

  messageAt (position: number): Message {
    return this.#messageAt(position)
  }

  /** The message_id at a position, without making its message. */
  idAt (position: number): string {
    return this.#idAt(position)
  }

  /**
   * Its message_id index, built first if it is not yet. The memory store keeps the events it adds
   * after the loaded segment in the loaded segment's index too, as negative values (the index's
   * own lookups skip them): a new ID is then looked up and added in one table, not two.
   */
  get messageIdIndex (): MessageIdTable {
    return this.#byMessageIdIndex ?? this.#index().byMessageId
  }

  /** The event stored with this message_id, if any. `hash`: its messageIdHash, when the caller has it. */
  messageWithId (messageId: string, hash?: number): Message | undefined {
    return this.messageWithIdHash(hash ?? messageIdHash(messageId), messageId)
  }

  /**
   * The event stored with the message_id whose messageIdHash this is, if any; `id` may make the
   * ID's string, only when an event with that hash is found (MessageIdTable.find).
   */
  messageWithIdHash (hash: number, id: string | (() => string)): Message | undefined {
    const byMessageId = this.#byMessageIdIndex ?? this.#index().byMessageId
    const position = byMessageId.find(hash, id)
    return position === -1 ? undefined : this.#messageAt(position)
  }

  /**
   * The event at this time with this message_id, if any (found by time: for a store that keeps
   * times, not events, by ID). A binary search on time, then message_id, the segment's order: the
   * events of one millisecond may be many (a producer whose clock counts seconds), and a search
   * through them one by one made a retry of n such events take n² steps.
   */
  messageWithIdAt (epochMs: number, id: string): Message | undefined {
    const position = this.positionWithIdAt(epochMs, id)
    return position === -1 ? undefined : this.#messageAt(position)
  }

  /** The position of the event at this time with this message_id (messageWithIdAt), or -1. */
  positionWithIdAt (epochMs: number, id: string): number {
    const times = this.#times
    let low = this.#lowerBound(epochMs)
    let high = low
    // The end of the millisecond's events: the first later time.
    for (let step = 1; high < this.#size && times[high] === epochMs; step *= 2) high = Math.min(this.#size, high + step)
    while (low < high) {
      const middle = (low + high) >>> 1
      const order = times[middle]! > epochMs ? 1 : compareMessageIds(this.#idAt(middle), id)
      if (order === 0) return middle
      if (order < 0) low = middle + 1
      else high = middle
    }
    return -1
  }

  /** Whether the event at a position has exactly these wire JSON bytes (its message is not made for it). */
  hasJson (position: number, { bytes, start, end }: JsonBytes): boolean {
    const from = this.#jsonOffsets[position]!
    const to = this.#jsonOffsets[position + 1]!
    return to - from === end - start && this.#json.compare(bytes, start, end, from, to) === 0
  }

  /**
   * Everything is pushed down: the indexes choose the candidates, the filters run here, on what
   * the chosen index does not already guarantee.
   */
  batches (query: EventQuery): Iterator<EventBatch> & Iterable<EventBatch> {
    const { positions: candidates, ofSelectedEntities, entity } = this.#candidates(query)
    // Built with the indexes (at load, on a merge, or for this query's entities): a fresh
    // ingest's segment answering a window alone is checked by text rather than numbered whole
    // for a few events. A walk of the window for several entities (whose indexes are built)
    // numbers them, to leave the other entities' events unmade (#filtered).
    const facts = ofSelectedEntities ? this.#eventFacts : this.#facts()
    const check = ofSelectedEntities
      ? (query.category === undefined && query.messageCodes === undefined && query.messageIds === undefined ? undefined : matchesExclusiveFilter)
      : matchesFilters
    // The generator of the case, returned as it is: not delegated to by one of its own (a
    // generator object and a delegation step less per query; a small answer is one batch).
    if (check === undefined && (candidates instanceof Uint32Array || isRange(candidates))) return this.#allOf(candidates, facts, entity)
    return this.#filtered(query, candidates, facts, check)
  }

  /** The candidates that pass the filters the chosen index does not already guarantee. */
  * #filtered (query: EventQuery, candidates: Candidates, facts: EventFacts | undefined, check: ((query: EventQuery, message: Message) => boolean) | undefined): Generator<EventBatch> {
    const bytes = this.#json
    const offsets = this.#jsonOffsets
    const made = this.#messages
    // An event not made yet is in the plain wire form: its entities are told by number and its
    // code or category read from its bytes, and its message made only if it may match
    // (WireExclusiveFilter); a scan that made every candidate's message kept them all.
    const wire = check === undefined ? undefined : WireExclusiveFilter.of(query.messageCodes, query.category)
    const numbered = check === matchesFilters && facts !== undefined ? numberedQuery(query) : undefined
    let messages: Message[] = []
    let positions: number[] = []
    for (const position of typeof candidates === 'function' ? candidates() : isRange(candidates) ? range(candidates.from, candidates.to) : candidates) {
      let message = made[position]
      if (message === undefined) {
        if (numbered !== undefined && !isOfNumberedQuery(numbered, facts!.deviceNumbers[position]!, facts!.spaceNumbers[position]!)) continue
        if (wire !== undefined && !wire.mayMatch(bytes, offsets[position]!)) continue
        message = this.#made(position)
      }
      if (check !== undefined && !check(query, message)) continue
      messages.push(message)
      positions.push(position)
      if (messages.length === EVENT_BATCH_SIZE) {
        yield { messages, encoded: { bytes, offsets, positions, facts } }
        messages = []
        positions = []
      }
    }
    if (messages.length > 0) yield { messages, encoded: { bytes, offsets, positions, facts } }
  }

  /**
   * Every candidate, when no filter is left to run (an entity's events, or a whole window): each
   * batch's positions are a view of the entity's index, or made at once for a window, and its
   * messages taken by position, without a generator step and two pushes per event (for the
   * busiest space's 944 events of 90 days, 25 → 8 µs in process; BENCHMARKS.md).
   */
  * #allOf (candidates: Uint32Array | PositionRange, facts: EventFacts | undefined, entity?: IndexWindow): Generator<EventBatch> {
    const bytes = this.#json
    const offsets = this.#jsonOffsets
    const all = this.#messages
    if (candidates instanceof Uint32Array) {
      const run = entity === undefined ? undefined : this.#runOf(entity, candidates.length)
      for (let from = 0; from < candidates.length; from += EVENT_BATCH_SIZE) {
        const positions = candidates.subarray(from, Math.min(candidates.length, from + EVENT_BATCH_SIZE))
        const messages: Message[] = new Array(positions.length)
        for (let i = 0; i < positions.length; i++) messages[i] = all[positions[i]!] ?? this.#made(positions[i]!)
        yield { messages, encoded: { bytes, offsets, positions, facts, run: run === undefined ? undefined : { bytes: run.bytes, starts: run.starts, first: entity!.from + from } } }
      }
      return
    }
    for (let from = candidates.from; from < candidates.to; from += EVENT_BATCH_SIZE) {
      const to = Math.min(candidates.to, from + EVENT_BATCH_SIZE)
      const positions = new Uint32Array(to - from)
      for (let i = 0; i < positions.length; i++) positions[i] = from + i
      const messages: Message[] = new Array(positions.length)
      for (let i = 0; i < positions.length; i++) messages[i] = all[from + i] ?? this.#made(from + i)
      yield { messages, encoded: { bytes, offsets, positions, facts } }
    }
  }

  /**
   * The JSON of every event of an entity's index in one piece, comma separated (EntityRuns), for
   * an entity with enough events to be worth it; made on its first query, then kept while the
   * cache's budget allows.
   */
  #runOf ({ index }: IndexWindow, answered: number): EncodedRun | undefined {
    if (index.length < EntityRuns.FROM_EVENTS) return undefined
    let run = entityRuns.get(index)
    if (run !== undefined) return run
    // Made only by an answer that copies a good share of the entity's events itself, so that
    // making it costs at most a few times the answer's own work: a client asking for a day of a
    // huge space cannot make the provider copy all of that space's events per request while
    // the cache gives runs up. A run larger than a quarter of the budget is not made.
    if (answered * EntityRuns.SHARE_TO_MAKE < index.length) return undefined
    run = joinedRun(this.#json, this.#jsonOffsets, index, EntityRuns.BUDGET_BYTES / 4)
    if (run !== undefined) entityRuns.add(index, run)
    return run
  }

  /** The first position whose time is >= ms. */
  #lowerBound (ms: number): number {
    return this.#lowerBoundIn(undefined, ms)
  }

  /** The first index into positions (all events when undefined) whose event's time is >= ms. */
  #lowerBoundIn (positions: Uint32Array | undefined, ms: number): number {
    const times = this.#times
    let low = 0
    let high = positions === undefined ? times.length : positions.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const time = times[positions === undefined ? middle : positions[middle]!]!
      if (time < ms) low = middle + 1
      else high = middle
    }
    return low
  }

  /** Every position in the window, in order. */
  #window (startMs: number, endMs: number): PositionRange {
    return { from: this.#lowerBound(startMs), to: this.#lowerBound(endMs) }
  }

  /**
   * Positions of the events in the window, in order, that may match: the cheapest of the ID,
   * entity and time indexes; and whether they are all of the selected entities already (read
   * from the entities' own indexes), so that only the exclusive filter is left to check.
   */
  #candidates (query: EventQuery): { positions: Candidates, ofSelectedEntities: boolean, entity?: IndexWindow } {
    const { startMs, endMs, entities, messageIds } = query
    const times = this.#times
    if (messageIds !== undefined) {
      const found: number[] = []
      const { byMessageId } = this.#indexes()
      for (const id of messageIds) {
        const position = byMessageId.get(id)
        if (position !== -1 && times[position]! >= startMs && times[position]! < endMs) found.push(position)
      }
      return { positions: found.sort((a, b) => a - b), ofSelectedEntities: entities === undefined }
    }
    if (entities === undefined) {
      const { messageCodes, category } = query
      const window = this.#window(startMs, endMs)
      if (messageCodes === undefined && category === undefined) return { positions: window, ofSelectedEntities: true }
      // Until the code index is built (in turns, after the load), a window of few events is read
      // as it is, each event's code told by its bytes: the first query by a code, one day of it,
      // finished the index in one piece, some 100 ms for a million events (a helper's black-box
      // attack, 2026-11-28).
      if (this.#byCode === undefined && this.#size > EXCLUSIVE_INDEX_AT_QUERY_MAX && window.to - window.from <= EXCLUSIVE_INDEX_AT_QUERY_MAX) return { positions: window, ofSelectedEntities: true }
      // Every event, of these codes or this category: their indexes' windows.
      return this.#candidatesOf(exclusiveIndexesOf(query, this.#exclusiveIndexes()), startMs, endMs)
    }
    const { byDevice, bySpace } = this.#indexes()
    const indexes: Uint32Array[] = []
    for (const id of entities.deviceIds) {
      const positions = byDevice.get(id)
      if (positions !== undefined && positions.length > 0) indexes.push(positions)
    }
    for (const id of entities.spaceIds) {
      const positions = bySpace.get(id)
      if (positions !== undefined && positions.length > 0) indexes.push(positions)
    }
    // Entities and codes or a category: the events of those codes (or that category), checked for
    // the entities, when they are fewer than the entities' events. A rare code of a large tag, or
    // any code asked for by a scoped token (its scope is its entities), walked the entities'
    // events for the few that had it: 63–139 ms in one piece over a year of a million events
    // (a black-box attacker's session, 2026-11-28), against 2.4 ms by the code's index.
    // Counted first: a few are read as they are, without the code index (which a segment made by
    // an ingest builds anew, some 3 ms for 16,384 events: a review's finding).
    if (query.messageCodes !== undefined || query.category !== undefined) {
      const ofEntities = this.#inWindow(indexes, startMs, endMs, Number.POSITIVE_INFINITY)
      const built = this.#byCode !== undefined || this.#size <= EXCLUSIVE_INDEX_AT_QUERY_MAX
      if (ofEntities > READ_WITHOUT_EXCLUSIVE_INDEX && built) {
        const exclusive = exclusiveIndexesOf(query, this.#exclusiveIndexes())
        if (this.#inWindow(exclusive, startMs, endMs, ofEntities) < ofEntities) return { positions: this.#candidatesOf(exclusive, startMs, endMs).positions, ofSelectedEntities: false }
      }
    }
    return this.#candidatesOf(indexes, startMs, endMs)
  }

  /** How many of these indexes' events are in the window, counted up to `enough` (then at least that many). */
  #inWindow (indexes: Uint32Array[], startMs: number, endMs: number, enough: number): number {
    let count = 0
    for (let i = 0; i < indexes.length && count < enough; i++) count += this.#lowerBoundIn(indexes[i]!, endMs) - this.#lowerBoundIn(indexes[i]!, startMs)
    return count
  }

  /**
   * The positions in the window of the events of these indexes (an entity's, a code's), in order;
   * all of them are of what the query selected (ofSelectedEntities), unless the window is walked
   * whole instead, when merging the indexes would read more.
   */
  #candidatesOf (indexes: Uint32Array[], startMs: number, endMs: number): { positions: Candidates, ofSelectedEntities: boolean, entity?: IndexWindow } {
    if (indexes.length === 0) return { positions: [], ofSelectedEntities: true }
    if (indexes.length === 1) {
      const index = indexes[0]!
      const from = this.#lowerBoundIn(index, startMs)
      return { positions: index.subarray(from, this.#lowerBoundIn(index, endMs)), ofSelectedEntities: true, entity: { index, from } }
    }
    const windows = indexes.map((positions) => ({ positions, from: this.#lowerBoundIn(positions, startMs), to: this.#lowerBoundIn(positions, endMs) }))
    const selected = windows.reduce((sum, { from, to }) => sum + to - from, 0)
    const overall = this.#lowerBound(endMs) - this.#lowerBound(startMs)
    // Sorting the entities' windows costs n log n; walking the whole window with a set lookup costs
    // its length. Take whichever reads less.
    if (selected * Math.log2(selected + 1) >= overall) {
      const { from, to } = this.#window(startMs, endMs)
      return { positions: () => range(from, to), ofSelectedEntities: false }
    }
    const merged = new Uint32Array(selected)
    let length = 0
    for (const { positions, from, to } of windows) {
      merged.set(positions.subarray(from, to), length)
      length += to - from
    }
    merged.sort()
    return { positions: () => unique(merged), ofSelectedEntities: true }
  }
}

/** The code or category indexes of a query's exclusive filter, those with events. */
function exclusiveIndexesOf ({ messageCodes, category }: EventQuery, { byCode, byCategory }: { byCode: Map<string, Uint32Array>, byCategory: Map<string, Uint32Array> }): Uint32Array[] {
  const indexes: Uint32Array[] = []
  for (const key of category !== undefined ? [category] : messageCodes ?? []) {
    const positions = (category !== undefined ? byCategory : byCode).get(key)
    if (positions !== undefined && positions.length > 0) indexes.push(positions)
  }
  return indexes
}

/**
 * A segment this small builds its code and category indexes for a query with entities when it
 * has none (some 13 ms at most); a larger one (the loaded events, until their index is built in
 * turns after the load) answers such a query by its entities' indexes, and one without entities
 * over a window of at most this many events by reading the window (a few milliseconds).
 */
const EXCLUSIVE_INDEX_AT_QUERY_MAX = 65_536

/** The entities' events in a window read as they are, however few of them have the codes asked for (some 50 µs). */
const READ_WITHOUT_EXCLUSIVE_INDEX = 1024

/** A window of one entity's index: the whole index, and where the window begins in it. */
interface IndexWindow {
  index: Uint32Array
  from: number
}

/** The events of an index, their JSON joined with commas: event i is bytes[starts[i], starts[i + 1] - 1). */
interface EncodedRun {
  bytes: Buffer
  starts: Uint32Array
}

/** The run of an index's events; undefined when it would be larger than `maxBytes`. */
function joinedRun (json: Buffer, offsets: Uint32Array, index: Uint32Array, maxBytes: number): EncodedRun | undefined {
  let size = 0
  for (let i = 0; i < index.length; i++) size += offsets[index[i]! + 1]! - offsets[index[i]!]! + 1
  if (size > maxBytes) return undefined
  const bytes = Buffer.allocUnsafe(size)
  const starts = new Uint32Array(index.length + 1)
  let at = 0
  for (let i = 0; i < index.length; i++) {
    starts[i] = at
    at += json.copy(bytes, at, offsets[index[i]!]!, offsets[index[i]! + 1]!)
    bytes[at++] = COMMA
  }
  starts[index.length] = at
  return { bytes, starts }
}

const COMMA = 0x2c

/**
 * Entities' events as one piece of JSON each, for the entities queried, within a budget shared
 * by every segment of the process, the least recently used given up first. An answer of an
 * entity's events is then copied in one piece instead of one copy per event: a copy costs about
 * 40 ns whatever its size, most of an answer of a busy space (944 events: BENCHMARKS.md, "What
 * profiling found"). A run is kept by its entity's index in its segment (an index belongs to one
 * segment and never changes, so a run never goes stale); a segment merged away leaves its runs
 * to be given up in their turn.
 */
class EntityRuns {
  /** An entity with fewer events answers fast enough event by event. */
  static readonly FROM_EVENTS = 64
  /** A run is made by an answer of at least one in this many of the entity's events. */
  static readonly SHARE_TO_MAKE = 8
  /** What the runs of the process may take together (README, "Limits and timeouts"). */
  static readonly BUDGET_BYTES = 64 * 1024 * 1024
  #bytes = 0
  readonly #runs = new Map<Uint32Array, EncodedRun>()

  get (key: Uint32Array): EncodedRun | undefined {
    const run = this.#runs.get(key)
    if (run !== undefined) {
      // Most recently used last.
      this.#runs.delete(key)
      this.#runs.set(key, run)
    }
    return run
  }

  add (key: Uint32Array, run: EncodedRun): void {
    this.#runs.set(key, run)
    this.#bytes += run.bytes.length
    for (const [oldest, { bytes }] of this.#runs) {
      if (this.#bytes <= EntityRuns.BUDGET_BYTES) break
      this.#runs.delete(oldest)
      this.#bytes -= bytes.length
    }
  }
}

const entityRuns = new EntityRuns()

/** Positions from `from` up to `to`: a window of the time order. */
interface PositionRange {
  from: number
  to: number
}

/**
 * Which positions may answer a query: a list of them (message_ids' lookups), a view of an
 * entity's index, a window, or a generator of them (several entities' indexes merged, or a
 * window to filter).
 */
type Candidates = number[] | Uint32Array | PositionRange | (() => Iterable<number>)

function isRange (candidates: Candidates): candidates is PositionRange {
  return typeof candidates === 'object' && 'from' in candidates
}

function * range (from: number, to: number): Generator<number> {
  for (let position = from; position < to; position++) yield position
}

/** The most bytes a new room reserves beyond what its events need now (pages never written to take no memory, but count as external memory). */
const ROOM_ESTIMATE_MAX = 8 * 1024 * 1024

/** The rooms' buffers, the next one made ready while the last one fills (one for the process). */
const roomBuffers = new PrefaultedBuffers()

/** No events: what appendEncoded appends to when a segment starts. */
const EMPTY = new MemorySegment([])

/**
 * The message as the store keeps it: its identifiers interned (the registry's strings, so its
 * lookups compare pointers), its category one of the two literals.
 */
function storedForm (message: Message): Message {
  message.message_code = intern(message.message_code)
  message.message_category = message.message_category === 'alert' ? 'alert' : 'notification'
  if (message.device_id !== undefined) message.device_id = intern(message.device_id)
  if (message.space_id !== undefined) message.space_id = intern(message.space_id)
  return message
}

/** Each entity's positions, by its ID, from the entity's number at each position (-1: none). */
function positionsByEntity (numbers: Int32Array, size: number): Map<string, Uint32Array> {
  let largest = -1
  for (let position = 0; position < size; position++) if (numbers[position]! > largest) largest = numbers[position]!
  const counts = new Uint32Array(largest + 1)
  for (let position = 0; position < size; position++) if (numbers[position]! >= 0) counts[numbers[position]!]!++
  const lists: Array<Uint32Array | undefined> = new Array(largest + 1)
  for (let number = 0; number <= largest; number++) if (counts[number]! > 0) lists[number] = new Uint32Array(counts[number]!)
  counts.fill(0)
  for (let position = 0; position < size; position++) {
    const number = numbers[position]!
    if (number >= 0) lists[number]![counts[number]!++] = position
  }
  const byEntity = new Map<string, Uint32Array>()
  for (let number = 0; number <= largest; number++) if (lists[number] !== undefined) byEntity.set(entityIdOf(number), lists[number]!)
  return byEntity
}

/** Gives every one of these positions the number. */
function numberAll (numbers: Int32Array, positions: Uint32Array, number: number): void {
  for (let i = 0; i < positions.length; i++) numbers[positions[i]!] = number
}

/** The positions of a sorted list without repeats: a device's event is in its device's window and in its space's. */
function * unique (sorted: Uint32Array): Generator<number> {
  let previous = -1
  for (const position of sorted) {
    if (position !== previous) yield position
    previous = position
  }
}
