import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Message } from '../../../schemas/message.js'
import { messageIdOf, parseEventLine, sameEvent, type StoredEvent } from '../../data/event-lines.js'
import { WireEvent } from '../../data/wire-line.js'
import { compareMessageIds } from '../event-order.js'
import { EVENT_BATCH_SIZE, type EventBatch, type EventFacts, type EventQuery, type EventStore, type StoreHealth, type StoredEntities } from '../event-store.js'
import type { IngestEvent, WriteOutcome } from '../event-writer.js'
import { EventsFileAppender } from './events-file-appender.js'
import { forEachLine, forEachLineBackward, lineText } from '../../data/file-lines.js'
import { MemorySegment } from './memory-segment.js'
import { joinJsonBytes } from '../../data/json-bytes.js'
import { MessageIdTable, messageIdHash, messageIdHashOfFnv } from './message-id-table.js'
import { takeWriteGroup } from '../write-groups.js'

/**
 * Segments up to this many events are merged as ingests add them (two of similar size at a
 * time), so a stream of small ingests leaves few segments to merge per answer; larger ones are
 * left alone, since building a segment blocks the event loop (about 2 µs an event: 16,384 events
 * are some 30 ms).
 */
const MERGE_LIMIT = 16_384

/**
 * What takeUnannounced reads of the file at a time, back from its end: it usually stops at the
 * last line (one it has), so not the 4 MiB chunks of a whole file's read.
 */
const TAIL_CHUNK_BYTES = 64 * 1024

/** The largest group's lines whose buffer is kept for the next group (a rare huge ingest's is not). */
const LINE_BUFFER_MAX = 16 * 1024 * 1024

/**
 * Events of a group judged in one turn of the event loop (their IDs' slots read, then each
 * judged); a larger group takes a turn between slices, and one before building its segment and
 * one before putting its lines together, so that other requests are served meanwhile. Judged in
 * one piece, a 70,000-line ingest held the event loop 80 ms, 230 ms when every line was
 * unchanged (scratch, 2026-11-28): 8,192 events are some 3 ms. The benchmark's groups (about
 * 2,000 events) are judged in one slice, as before.
 */
const JUDGED_PER_TURN = 8192

/** Events of the loaded segment indexed by code and category a turn (indexInTurns): some 6 ms. */
export const INDEXED_PER_TURN = 32_768

/**
 * The most events one group commit takes, of whole calls (takeWriteGroup): the calls after them
 * wait for the next group. A group's order, its segment and its lines are each made in one turn:
 * for this many events in time order, 13–29 ms each; sorting them when they come out of order
 * 17–80 ms (many events a millisecond: their IDs compared). Without a bound, the calls that
 * waited together for an append made one group however many they were.
 */
export const GROUP_EVENTS_MAX = 65_536

/**
 * The embedded store: every event in memory, in immutable segments (memory-segment.ts). The
 * events of EVENTS_FILE are the first; each ingest appends its new events to the file (flushed to
 * disk before it answers) and adds them as a new segment, merged with its recent neighbours.
 * An answer reads the segments that overlap its window, merging them in answer order.
 */
export class MemoryEventStore implements EventStore {
  readonly kind = 'memory'
  readonly #segments: MemorySegment[] = []
  readonly #appender: EventsFileAppender | undefined
  /**
   * The events added after the first segment, by message_id: in the first segment's own index
   * (MemorySegment.messageIdIndex), each as the negative of its number in the order they came
   * (-1 for the first), so that a new ID costs one lookup and one insert in one table (tables of
   * millions of IDs: each touch a miss of the CPU's cache); their times by that number. No
   * message is kept for them: a hash that matches is followed to the segments by time, where the
   * event's message_id is read (from its bytes, when its message is not made), so an ingested
   * event costs the collector nothing (BENCHMARKS.md, "What profiling found").
   */
  readonly #ids: MessageIdTable
  #addedTimes = new Float64Array(1024)
  /** What the groups' reads of their IDs' slots found, folded together, kept so that the reads are made (#commitGroup). */
  #touched = 0
  #addedCount = 0
  /** Segments are built from this one on (the first, loaded one, is never rebuilt). */
  #firstMergeable = 1
  /** Where a group's lines are put together for the file, kept from one group to the next. */
  #lineBuffer: Buffer | undefined
  /** Calls of writeEvents waiting for the next group commit, in call order. */
  #waiting: WriteCall[] = []
  /** Set by close: the indexes built in turns stop. */
  #closed = false
  /** Settles once the group commits under way (if any) are done. */
  #committing: Promise<void> | undefined

  /**
   * Every event is kept, also those of entities the registry does not list (yet): which entities
   * are served is decided per answer, above the store (store-contract.ts). `file` is where
   * ingested events are appended; without one the store takes no writes.
   */
  constructor (events: Iterable<StoredEvent> | MemorySegment, file?: string, loaded?: LoadedFile) {
    this.#segments.push(events instanceof MemorySegment ? events : new MemorySegment(events))
    this.#ids = this.#segments[0]!.messageIdIndex
    this.#file = file
    this.#appender = file === undefined ? undefined : new EventsFileAppender(file)
    this.tornTail = loaded?.tornTail
    this.#readUpTo = loaded?.bytes
  }

  /** The file's last line, cut short, that the load skipped (for the start-up's warning). */
  readonly tornTail: TornTail | undefined
  readonly #file: string | undefined
  /** Where the file's lines this store has read end (undefined: it was not loaded from its file). */
  #readUpTo: number | undefined

  /**
   * Takes the events other processes appended to the file after this store read it (a cluster's
   * worker started while others served: what they wrote during its load reached it neither by its
   * load nor by the bus, whose messages it could not take before it was listening). Events it
   * has already, from the bus, are not taken twice; a line not ended yet is left for later, and a
   * line that is no event (what a crash left) is skipped. Resolves with how many it took.
   */
  async takeAppendedSinceLoad (): Promise<number> {
    if (this.#file === undefined || this.#readUpTo === undefined) return 0
    const events: StoredEvent[] = []
    let unended: number | undefined
    const end = await forEachLine(this.#file, (line, bytes, start, end, unterminatedAt) => {
      if (unterminatedAt !== undefined) {
        unended = unterminatedAt
        return
      }
      const parsed = parseEventLine(lineText(bytes, start, end), line)
      if (parsed !== undefined && !('problem' in parsed)) events.push(parsed.event)
    }, undefined, this.#readUpTo)
    this.#readUpTo = unended ?? end
    const before = this.size
    this.takeWrittenElsewhere(events)
    return this.size - before
  }

  /**
   * The events at the end of the file that no process announced: a cluster's worker that died
   * after its append and before the primary passed its events on. It held the write lock, so
   * they are the file's last lines; read back from the end to the first line of an event this
   * store has (a line that is no event, or cut short, is passed over), taken to be served, and
   * returned in file order.
   */
  async takeUnannounced (): Promise<readonly StoredEvent[]> {
    if (this.#file === undefined) return []
    const unannounced: StoredEvent[] = []
    await forEachLineBackward(this.#file, (text) => {
      const parsed = parseEventLine(text, 0)
      if (parsed === undefined || 'problem' in parsed) return true
      const { message } = parsed.event
      if (this.#storedAt(messageIdHash(message.message_id), () => message.message_id) !== undefined) return false
      unannounced.push(parsed.event)
      return true
    }, TAIL_CHUNK_BYTES)
    return this.#takeFresh(unannounced.reverse())
  }

  get size (): number {
    return this.#segments.reduce((sum, segment) => sum + segment.size, 0)
  }

  /** Every event's device and space, segment by segment (each in answer order), without making its message. */
  * storedEntities (): Generator<StoredEntities> {
    for (const segment of this.#segments) yield * segment.entities()
  }

  /** Segments in use (for tests of the merging). */
  get segmentCount (): number {
    return this.#segments.length
  }

  /** Synchronous: every event is in memory. */
  queryEvents (query: EventQuery): Iterable<EventBatch> {
    // The common case, nothing ingested since the load: no list to build per answer.
    if (this.#segments.length === 1) return this.#segments[0]!.batches(query)
    const overlapping = this.#segments.filter((segment) => segment.firstMs < query.endMs && segment.lastMs >= query.startMs)
    if (overlapping.length <= 1) return (overlapping[0] ?? this.#segments[0]!).batches(query)
    return mergeBatches(overlapping.map((segment) => segment.batches(query)))
  }

  async health (): Promise<StoreHealth> {
    return { ready: true }
  }

  async close (): Promise<void> {
    this.#closed = true
    await this.#committing
    await this.#appender?.close()
  }

  /**
   * Builds the loaded events' code and category indexes a slice a turn, other requests served
   * between them (MemorySegment.buildExclusiveIndexes): the first query by codes or category
   * finds them built, where it built them in one piece (a million events: about 200 ms). Resolves
   * once they are built, or the store is closed.
   */
  async indexInTurns (): Promise<void> {
    const loaded = this.#segments[0]!
    do await nextTurn()
    while (!this.#closed && !loaded.buildExclusiveIndexes(INDEXED_PER_TURN))
  }

  /**
   * Ingests events: an ID already stored as this very event is unchanged, as another event
   * refused; the others are appended to EVENTS_FILE (on disk before this resolves), then served.
   *
   * Group commit: calls made while an append is on its way to the disk wait for it, then go
   * together (up to GROUP_EVENTS_MAX events, whole calls: the next ones form the next group),
   * each judged after the ones before it, in one write to the file opened with O_DSYNC
   * (events-file-appender.ts); each resolves with its own outcome once that write is on disk (all
   * of the group fail together when it is not). A batch of 1,000 events takes about a millisecond
   * to reach the disk here, as long as the provider takes to read several batches: one write
   * per batch held every other batch back (BENCHMARKS.md, "Live events").
   */
  writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ events, resolve, reject })
      // Calls made in the same turn (a group the live plugin hands over at once) join the first's group.
      this.#committing ??= Promise.resolve().then(() => this.#commitWaiting())
    })
  }

  async #commitWaiting (): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const { group, rest } = takeWriteGroup(this.#waiting, GROUP_EVENTS_MAX)
        this.#waiting = rest
        try {
          await this.#commit(group)
        } catch (error) {
          // A defect of this store's own: its calls fail (500), and the writes after them go on.
          for (const call of group) call.reject(error)
        }
      }
    } finally {
      this.#committing = undefined
    }
  }

  /** Events another process has already appended to the same file (cluster workers): served from now on. */
  takeWrittenElsewhere (events: readonly StoredEvent[]): void {
    this.#takeFresh(events)
  }

  /** The events whose message_id this store has not, taken to be served; returned. */
  #takeFresh (events: readonly StoredEvent[]): StoredEvent[] {
    const fresh = events.filter(({ message, epochMs }) => {
      const hash = messageIdHash(message.message_id)
      if (this.#storedAt(hash, () => message.message_id) !== undefined) return false
      this.#remember(hash, epochMs)
      return true
    })
    if (fresh.length > 0) this.#add(new MemorySegment(fresh))
    return fresh
  }

  async #commit (group: readonly WriteCall[]): Promise<void> {
    if (this.#appender === undefined) {
      for (const call of group) call.reject(new Error('this memory store has no events file to write to'))
      return
    }
    // The group's new events go into the ID index as they are judged (one touch of its slot for
    // the lookup and the insert), and are taken out again if the group fails before its events
    // are on disk. After that their IDs stay in the index, since their lines are in the file;
    // should adding their segment then fail (a defect, or no memory left), the callers get the
    // failure and the events are not served until a restart loads them from the file (a retry
    // meanwhile would find no event for those IDs and write its lines again).
    const firstAdded = this.#addedCount
    const added: AddedIds = { hashes: [], numbers: [] }
    const progress = { appended: false }
    try {
      await this.#commitGroup(group, added, progress)
    } catch (error) {
      if (!progress.appended) {
        // By their own numbers, not as a run from firstAdded: should another process's events be
        // taken between two slices (the cluster's write lock keeps them out), theirs stay.
        for (let i = 0; i < added.hashes.length; i++) this.#ids.remove(added.hashes[i]!, -(added.numbers[i]! + 1))
        // Their numbers are given again, unless another worker's events were numbered meanwhile.
        if (this.#addedCount === firstAdded + added.hashes.length) this.#addedCount = firstAdded
      }
      throw error
    }
  }

  /** IDs in the message_id index, loaded and added (for tests of what a failed group leaves). */
  get indexedIds (): number {
    return this.#ids.size
  }

  /**
   * Each call's outcome, its events judged after the ones before them (in the store, then earlier
   * in the group), JUDGED_PER_TURN events a turn. The new events' IDs go into the ID index as
   * they are judged, and into `added` (taken out again by #commit if the group fails).
   */
  async #judge (group: readonly WriteCall[], added: AddedIds): Promise<{ stored: IngestEvent[], outcomes: WriteOutcome[], total: number }> {
    // The group's own new events, by message_id: a later call (or line) of the group with one of
    // their IDs is judged against them.
    const stored: IngestEvent[] = []
    const total = group.reduce((sum, { events }) => sum + events.length, 0)
    const storedById = new MessageIdTable((index) => messageIdOf(stored[index]!.event), total, 1)
    const outcomes: WriteOutcome[] = []
    let sinceTurn = 0
    for (const { events } of group) {
      const outcome: WriteOutcome = { written: 0, unchanged: 0, refused: [], stored: [] }
      for (let from = 0; from < events.length;) {
        if (sinceTurn === JUDGED_PER_TURN) {
          await nextTurn()
          sinceTurn = 0
        }
        const to = Math.min(events.length, from + JUDGED_PER_TURN - sinceTurn)
        // The ID index holds millions of entries: each new ID's slot is a miss of the CPU's cache.
        // Read the slice's first, in a loop whose reads do not wait for one another (the CPU
        // overlaps their misses), so that the judging below finds them in the cache.
        let touched = 0
        for (let i = from; i < to; i++) touched ^= this.#ids.touch(ingestedIdHash(events[i]!.event))
        this.#touched ^= touched
        for (let i = from; i < to; i++) {
          const ingest = events[i]!
          const { event } = ingest
          const hash = ingestedIdHash(event)
          // A new ID's hash is in neither table (one probe each, nothing made); only when one is,
          // its string is made and the event with it looked for.
          let standing: Standing = 'new'
          if (storedById.hasHash(hash) || this.#ids.hasHash(hash)) {
            const id = messageIdOf(event)
            const inGroup = storedById.find(hash, id)
            standing = inGroup !== -1 ? (sameEvent(stored[inGroup]!.event.message, event.message) ? 'same' : 'different') : this.#standing(hash, id, ingest)
          }
          if (standing === 'new') {
            storedById.addHashed(hash, stored.length)
            stored.push(ingest)
            added.hashes.push(hash)
            added.numbers.push(this.#remember(hash, event.epochMs))
            outcome.stored.push(ingest)
          } else if (standing === 'same') {
            outcome.unchanged++
          } else {
            outcome.refused.push({ line: ingest.line, reason: `message_id ${JSON.stringify(messageIdOf(event))} is already stored for a different event` })
          }
        }
        sinceTurn += to - from
        from = to
      }
      outcome.written = outcome.stored.length
      outcomes.push(outcome)
    }
    return { stored, outcomes, total }
  }

  /**
   * A group judged, then written: its segment built before the append (so that whatever fails,
   * fails before anything is on disk), its lines appended and on disk, then its events served
   * and each call answered with its outcome. A large group gives the event loop a turn between
   * these pieces.
   */
  async #commitGroup (group: readonly WriteCall[], added: AddedIds, progress: { appended: boolean }): Promise<void> {
    const { stored, outcomes, total } = await this.#judge(group, added)
    const large = total > JUDGED_PER_TURN
    if (large) await nextTurn()
    // Built before the append: whatever fails here fails before anything is on disk. Events that
    // come after the last segment's are written straight into its room; that segment reads only
    // its own events, so nothing changes for anyone until the new segment takes its place.
    const ordered = MemorySegment.inAnswerOrder(stored)
    // A group that came out of order was sorted in this turn.
    if (large && ordered !== stored) await nextTurn()
    // A full last segment (or none after the loaded one) is not appended to: a new one starts, with room.
    const last = this.#segments.length > this.#firstMergeable ? this.#segments[this.#segments.length - 1]! : undefined
    const base = last !== undefined && last.size + stored.length <= MERGE_LIMIT ? last : undefined
    const appended = stored.length > 0 && stored.length <= MERGE_LIMIT ? MemorySegment.appendEncoded(base, ordered, MERGE_LIMIT) : undefined
    const own = appended === undefined && stored.length > 0 ? MemorySegment.fromEncoded(ordered) : undefined
    if (large) await nextTurn()
    const lines = joinJsonBytes(stored.map(({ json }) => json), true, this.#lineBuffer).bytes
    // Kept for the next group (one group at a time is written), so its pages stay in memory.
    if (lines.length > (this.#lineBuffer?.length ?? 0) && lines.length <= LINE_BUFFER_MAX) this.#lineBuffer = Buffer.allocUnsafe(2 * lines.length)
    await this.#appender!.append(lines)
    progress.appended = true
    const segments = this.#segments
    if (appended !== undefined && (base === undefined || segments[segments.length - 1] === base)) {
      if (base !== undefined) segments.pop()
      segments.push(appended)
    } else if (stored.length > 0) {
      // Out of order with the last segment, or another segment came last while the append was on
      // its way (events another worker wrote): a segment of their own, merged as any other.
      this.#add(own ?? MemorySegment.fromEncoded(ordered))
    }
    group.forEach((call, i) => { call.resolve(outcomes[i]!) })
  }

  /**
   * Where the stored event with the message_id whose messageIdHash this is sits, if any; `id`
   * makes the ID's string, called only when an event with that hash is found. Nothing is made of
   * the event itself.
   */
  #storedAt (hash: number, id: () => string): StoredPlace | undefined {
    const loaded = this.#segments[0]!
    let found: StoredPlace | undefined
    this.#ids.findWhere(hash, (value) => {
      found = value >= 0
        ? (loaded.idAt(value) === id() ? { segment: loaded, position: value } : undefined)
        : this.#addedAt(this.#addedTimes[-value - 1]!, id())
      return found !== undefined
    })
    return found
  }

  /**
   * How an ingested event stands against the stored event with its message_id. Stored bytes equal
   * to its own are the same event (an event's wire JSON is made from its fields alone), told
   * without making the stored event's message: posting a 70,000-line body again made and kept
   * the message of every one (230 ms in one turn, and their memory; scratch, 2026-11-28).
   */
  #standing (hash: number, id: string, { event, json }: IngestEvent): Standing {
    const place = this.#storedAt(hash, () => id)
    if (place === undefined) return 'new'
    if (place.segment.hasJson(place.position, json)) return 'same'
    return sameEvent(place.segment.messageAt(place.position), event.message) ? 'same' : 'different'
  }

  /** Where the added event at this time with this message_id is, in the segments after the first. */
  #addedAt (epochMs: number, id: string): StoredPlace | undefined {
    const segments = this.#segments
    for (let i = this.#firstMergeable; i < segments.length; i++) {
      const segment = segments[i]!
      if (epochMs < segment.firstMs || epochMs > segment.lastMs) continue
      const position = segment.positionWithIdAt(epochMs, id)
      if (position !== -1) return { segment, position }
    }
    return undefined
  }

  /** An event added after the first segment: its ID's hash and its time, under its number (returned). */
  #remember (hash: number, epochMs: number): number {
    const number = this.#addedCount++
    if (number === this.#addedTimes.length) {
      const times = new Float64Array(2 * number)
      times.set(this.#addedTimes)
      this.#addedTimes = times
    }
    this.#addedTimes[number] = epochMs
    this.#ids.addHashed(hash, -(number + 1))
    return number
  }

  /**
   * A new segment, appended to the last one when it comes after it (a live
   * ingest's recent events: only the new events are copied), else merged with the last ones
   * while they are of similar size; either while the result stays small.
   */
  #add (added: MemorySegment): void {
    const segments = this.#segments
    let segment = added
    while (segments.length > this.#firstMergeable) {
      const last = segments[segments.length - 1]!
      if (last.size + segment.size > MERGE_LIMIT) break
      const appended = MemorySegment.append(last, segment, MERGE_LIMIT)
      if (appended === undefined && last.size > 2 * segment.size) break
      segments.pop()
      segment = appended ?? MemorySegment.merge(last, segment)
    }
    segments.push(segment)
  }
}

/**
 * messageIdHash of an ingested event's message_id: finished from the hash the scan made of it for
 * an event read in wire form (its ID is printable ASCII, a byte a UTF-16 code unit: the same
 * hash), so neither its message nor its ID's string is made for it.
 */
function ingestedIdHash (event: StoredEvent): number {
  return event instanceof WireEvent ? messageIdHashOfFnv(event.idFnv) : messageIdHash(event.message.message_id)
}

/** Where a stored event is: its segment, and its position in it. */
interface StoredPlace {
  segment: MemorySegment
  position: number
}

/** An ingested event against the stored ones: a new message_id, the same event, or another event under its ID. */
type Standing = 'new' | 'same' | 'different'

/** The IDs a group added to the index, each with its number (#remember), taken out again if the group fails before its append. */
interface AddedIds {
  hashes: number[]
  numbers: number[]
}

/** A call of writeEvents waiting for its group commit. */
interface WriteCall {
  events: readonly IngestEvent[]
  resolve: (outcome: WriteOutcome) => void
  reject: (error: unknown) => void
}

/** One segment's answer, read event by event. */
interface SegmentCursor {
  batches: Iterator<EventBatch>
  batch: EventBatch | undefined
  index: number
}

function advance (cursor: SegmentCursor): boolean {
  cursor.index++
  while (cursor.batch === undefined || cursor.index >= cursor.batch.messages.length) {
    const next = cursor.batches.next()
    if (next.done === true) {
      cursor.batch = undefined
      return false
    }
    cursor.batch = next.value
    cursor.index = 0
  }
  return true
}

function comesBefore (a: Message, b: Message): boolean {
  return a.date_time < b.date_time || (a.date_time === b.date_time && compareMessageIds(a.message_id, b.message_id) < 0)
}

/**
 * The segments' answers merged in answer order. A batch carries one segment's encoded JSON, so a
 * batch ends where the next event comes from another segment; segments that follow each other in
 * time (the usual case: ingests bring recent events) still give full batches.
 */
function * mergeBatches (answers: Array<Iterator<EventBatch>>): Generator<EventBatch> {
  const cursors: SegmentCursor[] = []
  for (const batches of answers) {
    const cursor: SegmentCursor = { batches, batch: undefined, index: -1 }
    if (advance(cursor)) cursors.push(cursor)
  }
  let from: SegmentCursor | undefined
  let messages: Message[] = []
  let positions: number[] = []
  let bytes: Buffer | undefined
  let offsets: Uint32Array | undefined
  let facts: EventFacts | undefined
  const flush = (): EventBatch => {
    const batch: EventBatch = { messages, encoded: bytes === undefined ? undefined : { bytes, offsets: offsets!, positions, facts } }
    messages = []
    positions = []
    return batch
  }
  while (cursors.length > 0) {
    let best = 0
    for (let i = 1; i < cursors.length; i++) {
      const candidate = cursors[i]!
      if (comesBefore(candidate.batch!.messages[candidate.index]!, cursors[best]!.batch!.messages[cursors[best]!.index]!)) best = i
    }
    const cursor = cursors[best]!
    const batch = cursor.batch!
    if ((cursor !== from || messages.length === EVENT_BATCH_SIZE) && messages.length > 0) yield flush()
    from = cursor
    bytes = batch.encoded?.bytes
    offsets = batch.encoded?.offsets
    facts = batch.encoded?.facts
    messages.push(batch.messages[cursor.index]!)
    if (batch.encoded !== undefined) positions.push(batch.encoded.positions[cursor.index]!)
    if (!advance(cursor)) cursors.splice(best, 1)
  }
  if (messages.length > 0) yield flush()
}

/** What the load read of the store's file: where its whole lines end, and a last line a crash cut short. */
export interface LoadedFile {
  bytes: number
  tornTail?: TornTail | undefined
}

/** The file's last line when a crash cut it short (events-file-appender.ts, isCutShortLine): its number, where it starts, and its length in bytes. */
export interface TornTail {
  line: number
  offset: number
  bytes: number
}
