import type { Message } from '../../schemas/message.js'
import { messageOfWireJson } from '../data/wire-line.js'
import { formatEventTime } from '../time/rfc3339.js'
import type { LiveEvent } from './live-event.js'

export interface Retention {
  /** At most this many events are kept ... */
  events: number
  /** ... and none accepted longer ago than this. */
  ms: number
}

/** What a Last-Event-ID resumes with: the events accepted after it, or a reset. */
export type Resumption =
  | { events: ResumedEvents }
  /** The cursor is older than what is kept, or not this log's: backfill from `since` with the events endpoint. */
  | { since: string }

const MINUTE_MS = 60_000

/** The log's first room, in events; it doubles up to the retention's count. */
const INITIAL_CAPACITY = 1024

/** The kept events' JSON is copied into chunks of this size (an event larger than one gets one of its own). */
const CHUNK_BYTES = 1024 * 1024

const LINE_BREAK = 0x0a

/** Chunks let go are kept for reuse, this many at most. */
const SPARE_CHUNKS = 4

/**
 * At most this many kept events are read for a reset's filter (about 0.5 µs each): beyond, they
 * count as dropped ones do, to the minute, whoever's they are. A log of a million late events of
 * other consumers made every reset, which any token can ask for, hold the event loop for half a
 * second.
 */
export const MAX_SINCE_FILTERED = 10_000

/** Bounds the summary of dropped events (a year of minutes is 525,600). */
const MAX_DROPPED_MARKS = 100_000

/**
 * The events the provider accepted, in order, kept for a while so a stream client that
 * reconnects with Last-Event-ID gets what it missed. A cursor is `<log id>-<seq>`: the log id
 * names this run of the provider (a cluster's workers share it), so a cursor of an earlier run
 * or of another instance is recognised as such and answered with a reset instead of a guess.
 *
 * For a reset to name from when to backfill, the log remembers, for the events it has dropped,
 * the earliest date_time of those accepted after any point: a stack of (seq, minute) marks with
 * increasing minutes, each the earliest date_time (floored to the minute) of the dropped events
 * from its seq on. A live stream's events come in time order, so that is about one mark per
 * minute; past MAX_DROPPED_MARKS the two oldest merge, which only makes `since` earlier.
 */
export class EventLog {
  readonly logId: string
  readonly #retention: Retention
  /**
   * The kept events' seqs, times and wire JSON, no message and no string: their JSON copied into
   * chunks of CHUNK_BYTES, one after another, and each event's chunk and place in typed arrays. A
   * chunk is let go once its last event is dropped, and kept for reuse (a few of them): once the
   * retention is reached, new events go into the memory of dropped ones instead of fresh pages.
   * A resumed event's message is read from its JSON, only for the events a resuming stream asks
   * for. Messages kept here, one object and two strings an event, were what the collector copied
   * and traced per ingested event, a third of an ingest's time; the ingest's own path makes none
   * (WrittenEvent; BENCHMARKS.md, "What profiling found").
   *
   * A ring: the oldest kept event at #head, #count of them, wrapping at the arrays' length; it
   * doubles while it holds fewer than the retention's count, and once it does, each new event
   * takes the slot of the one dropped for it. An array that grew and was compacted by copying a
   * million entries was a tenth of an ingest's profile.
   */
  #seqs = new Float64Array(INITIAL_CAPACITY)
  #acceptedAt = new Float64Array(INITIAL_CAPACITY)
  #epochMs = new Float64Array(INITIAL_CAPACITY)
  #chunkOf = new Float64Array(INITIAL_CAPACITY)
  #starts = new Uint32Array(INITIAL_CAPACITY)
  #ends = new Uint32Array(INITIAL_CAPACITY)
  /** The chunks holding kept events, by number; the last one is written to. */
  readonly #chunks = new Map<number, Buffer>()
  #chunkNumber = -1
  #chunk: Buffer | undefined
  #chunkUsed = 0
  /** Chunks let go, for reuse. */
  readonly #spareChunks: Buffer[] = []
  #head = 0
  #count = 0
  #lastSeq = 0
  /** Monotonic stack of the dropped events' earliest minutes (see above). */
  #droppedMarks: Array<{ seq: number, minuteMs: number }> = []
  #lastDroppedSeq = 0

  constructor (logId: string, retention: Retention) {
    this.logId = logId
    this.#retention = retention
  }

  /** The cursor of the last event accepted (or of the log's beginning). */
  get headCursor (): string {
    return this.cursorOf(this.#lastSeq)
  }

  /** The seq of the last event accepted (0 before any). */
  get lastSeq (): number {
    return this.#lastSeq
  }

  get size (): number {
    return this.#count
  }

  cursorOf (seq: number): string {
    return `${this.logId}-${seq}`
  }

  /** Appends events in seq order, then drops what the retention no longer keeps. */
  append (events: readonly LiveEvent[], now = Date.now()): void {
    const maxEvents = this.#retention.events
    // Events that follow each other in one buffer, each line after a line break (an ingest's
    // lines of one body), are copied in one piece with those line breaks, when it ends.
    let run: Buffer | undefined
    let runFrom = 0
    let runTo = 0
    let runAt = 0
    const copyRun = () => {
      if (run !== undefined) run.copy(this.#chunk!, runAt, runFrom, runTo)
      run = undefined
    }
    for (const event of events) {
      if (event.seq <= this.#lastSeq) continue
      if (this.#count >= maxEvents && this.#count > 0) this.#dropOldest()
      if (this.#count === this.#seqs.length) this.#grow()
      const slot = this.#slot(this.#count)
      // An ingest's JSON as bytes, copied; another worker's or instance's from its text (`json`
      // only then: an ingest's text is not made for the log).
      const { bytes } = event
      let start: number
      if (bytes === undefined) {
        copyRun()
        const text = event.json
        const chunk = this.#room(Buffer.byteLength(text))
        start = this.#chunkUsed
        this.#chunkUsed = start + chunk.write(text, start, 'utf8')
      } else {
        const size = bytes.end - bytes.start
        if (run === bytes.bytes && bytes.start === runTo + 1 && run[runTo] === LINE_BREAK && this.#chunkUsed + 1 + size <= this.#chunk!.length) {
          // The next line of the run: after the line break kept between them.
          start = this.#chunkUsed + 1
          runTo = bytes.end
        } else {
          copyRun()
          this.#room(size)
          start = this.#chunkUsed
          run = bytes.bytes
          runFrom = bytes.start
          runTo = bytes.end
          runAt = start
        }
        this.#chunkUsed = start + size
      }
      this.#seqs[slot] = event.seq
      this.#acceptedAt[slot] = now
      this.#epochMs[slot] = event.epochMs ?? Date.parse(event.message.date_time)
      this.#chunkOf[slot] = this.#chunkNumber
      this.#starts[slot] = start
      this.#ends[slot] = this.#chunkUsed
      this.#count++
      this.#lastSeq = event.seq
    }
    copyRun()
    this.#dropExpired(now)
  }

  /** The chunk to write `size` bytes to: the current one, or a new one (spare, or fresh) when they do not fit. */
  #room (size: number): Buffer {
    if (this.#chunk !== undefined && this.#chunkUsed + size <= this.#chunk.length) return this.#chunk
    const chunk = size > CHUNK_BYTES ? Buffer.allocUnsafeSlow(size) : this.#spareChunks.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES)
    this.#chunkNumber++
    // The one written before stays while it holds kept events (it goes when its last is dropped).
    if (this.#chunk !== undefined && (this.#count === 0 || this.#chunkOf[this.#slot(this.#count - 1)] !== this.#chunkNumber - 1)) this.#release(this.#chunkNumber - 1)
    this.#chunks.set(this.#chunkNumber, chunk)
    this.#chunk = chunk
    this.#chunkUsed = 0
    return chunk
  }

  /** A chunk none of whose events is kept any more: let go, and kept for reuse if there is room. */
  #release (number: number): void {
    const chunk = this.#chunks.get(number)
    if (chunk === undefined) return
    this.#chunks.delete(number)
    if (chunk.length === CHUNK_BYTES && this.#spareChunks.length < SPARE_CHUNKS) this.#spareChunks.push(chunk)
  }

  /** How many chunks of JSON are kept, spare ones included (for tests of what the log holds on to). */
  get chunksKept (): number {
    return this.#chunks.size + this.#spareChunks.length
  }

  /**
   * What a client that last saw `cursor` is owed: of the events after it, those `keep` keeps (the
   * stream's filter; only those are handed out, so a resume from far back holds nothing for the
   * events it would skip).
   */
  resume (cursor: string, now = Date.now(), keep?: (message: Message) => boolean): Resumption {
    this.#dropExpired(now)
    const seq = this.#seqOf(cursor)
    if (seq === undefined) return { since: this.#since(0, keep, runStartOf(cursor, now)) }
    if (seq > this.#lastSeq) return { since: this.#since(0, keep) }
    const firstSeq = this.#firstSeq()
    // Events after the cursor were dropped, or came before this process joined the log.
    if (seq < firstSeq - 1) return { since: this.#since(seq, keep) }
    return { events: new ResumedEvents(seq, this.#lastSeq, (at) => this.#eventAt(at, keep)) }
  }

  /**
   * The event of this seq if the log still keeps it (null when `keep` does not keep it),
   * undefined when it is no longer kept. Its text is made now: the chunk is reused once its
   * events are dropped.
   */
  #eventAt (seq: number, keep: ((message: Message) => boolean) | undefined): LiveEvent | null | undefined {
    const i = seq - this.#firstSeq()
    if (i < 0 || i >= this.#count) return undefined
    const slot = this.#slot(i)
    const chunk = this.#chunks.get(this.#chunkOf[slot]!)!
    const start = this.#starts[slot]!
    const end = this.#ends[slot]!
    const message = messageOfWireJson(chunk, start, end)
    if (keep !== undefined && !keep(message)) return null
    return { seq: this.#seqs[slot]!, message, json: chunk.toString('utf8', start, end) }
  }

  /** The slot of the i-th kept event (0: the oldest). */
  #slot (i: number): number {
    const slot = this.#head + i
    return slot < this.#seqs.length ? slot : slot - this.#seqs.length
  }

  /** Twice the room, the kept events moved to its start in order. */
  #grow (): void {
    const capacity = Math.min(this.#seqs.length * 2, Math.max(this.#retention.events, this.#seqs.length + 1))
    const count = this.#count
    const moved = <T extends Float64Array | Uint32Array>(array: T, larger: T): T => {
      for (let i = 0; i < count; i++) larger[i] = array[this.#slot(i)]!
      return larger
    }
    this.#seqs = moved(this.#seqs, new Float64Array(capacity))
    this.#acceptedAt = moved(this.#acceptedAt, new Float64Array(capacity))
    this.#epochMs = moved(this.#epochMs, new Float64Array(capacity))
    this.#chunkOf = moved(this.#chunkOf, new Float64Array(capacity))
    this.#starts = moved(this.#starts, new Uint32Array(capacity))
    this.#ends = moved(this.#ends, new Uint32Array(capacity))
    this.#head = 0
  }

  #dropOldest (): void {
    const head = this.#head
    const chunk = this.#chunkOf[head]!
    this.#markDropped(this.#seqs[head]!, this.#epochMs[head]!)
    this.#head = head + 1 === this.#seqs.length ? 0 : head + 1
    this.#count--
    // The chunk's last kept event: the chunk is let go, unless it is the one written to.
    if ((this.#count === 0 || this.#chunkOf[this.#head] !== chunk) && chunk !== this.#chunkNumber) this.#release(chunk)
  }

  #firstSeq (): number {
    return this.#count > 0 ? this.#seqs[this.#head]! : this.#lastSeq + 1
  }

  #seqOf (cursor: string): number | undefined {
    const dash = cursor.lastIndexOf('-')
    if (dash === -1 || cursor.slice(0, dash) !== this.logId) return undefined
    const text = cursor.slice(dash + 1)
    if (!/^\d{1,15}$/.test(text)) return undefined
    return Number(text)
  }

  /**
   * The earliest date_time of the events accepted after `seq` that this log can no longer
   * replay, together with every kept one that `keep` keeps (the stream goes on live after a
   * reset, so the backfill covers them too; the others are not the stream's, whose client must
   * not learn their times; past MAX_SINCE_FILTERED of them, to the minute, unfiltered); for a cursor that is not this log's, of every event it knows and of
   * the log's own beginning; never later than `notAfter`.
   */
  #since (seq: number, keep: ((message: Message) => boolean) | undefined, notAfter = Number.POSITIVE_INFINITY): string {
    let earliest = notAfter
    const marks = this.#droppedMarks
    // The first mark after seq holds the earliest minute of the dropped events after seq.
    let low = 0
    let high = marks.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (marks[middle]!.seq <= seq) low = middle + 1
      else high = middle
    }
    // No mark after it: the events after the cursor came before this process joined the log.
    earliest = Math.min(earliest, low < marks.length ? marks[low]!.minuteMs : this.#startedMs())
    let filtered = 0
    for (let i = 0; i < this.#count; i++) {
      const slot = this.#slot(i)
      const ms = this.#epochMs[slot]!
      if (ms >= earliest) continue
      if (keep === undefined) earliest = ms
      else if (filtered++ < MAX_SINCE_FILTERED) {
        if (keep(messageOfWireJson(this.#chunks.get(this.#chunkOf[slot]!)!, this.#starts[slot]!, this.#ends[slot]!))) earliest = ms
      } else earliest = Math.floor(ms / MINUTE_MS) * MINUTE_MS
    }
    return formatEventTime(Number.isFinite(earliest) ? earliest : Date.now())
  }

  #startedMs (): number {
    const ms = parseInt(this.logId, 36)
    return Number.isFinite(ms) ? ms : Date.now()
  }

  #dropExpired (now: number): void {
    const { events: maxEvents, ms: maxMs } = this.#retention
    while (this.#count > 0 && (this.#count > maxEvents || this.#acceptedAt[this.#head]! < now - maxMs)) this.#dropOldest()
  }

  #markDropped (seq: number, epochMs: number): void {
    const minuteMs = Math.floor(epochMs / MINUTE_MS) * MINUTE_MS
    const marks = this.#droppedMarks
    const last = marks[marks.length - 1]
    if (last !== undefined && last.minuteMs === minuteMs) {
      // The usual case, an event of the same minute as the one dropped before it: the mark it
      // would replace, moved on (one event at a time, without a new mark for each).
      last.seq = seq
    } else {
      while (marks.length > 0 && marks[marks.length - 1]!.minuteMs >= minuteMs) marks.pop()
      marks.push({ seq, minuteMs })
      if (marks.length > MAX_DROPPED_MARKS) {
        // The two oldest become one: its seq the later, its minute the earlier.
        marks[1] = { seq: marks[1]!.seq, minuteMs: marks[0]!.minuteMs }
        marks.shift()
      }
    }
    this.#lastDroppedSeq = seq
  }
}

/**
 * For a cursor of another log (an earlier run of the provider, or another instance): when that
 * run began, to the minute (a log's id is its start in base 36, newLogId), or undefined when the
 * cursor names none that has begun. What that run accepted after the cursor is not known here,
 * but it was accepted after the run began: a backfill from then misses none of it, unless an
 * event was dated before the run began (a late one), which no reset can know of.
 */
function runStartOf (cursor: string, now: number): number | undefined {
  const dash = cursor.lastIndexOf('-')
  const id = dash > 0 ? cursor.slice(0, dash) : ''
  if (!/^[0-9a-z]{1,11}$/.test(id)) return undefined
  const ms = parseInt(id, 36)
  return ms >= EARLIEST_RUN_MS && ms <= now ? Math.floor(ms / MINUTE_MS) * MINUTE_MS : undefined
}

/** No run of this provider began before this (a cursor naming an earlier start is no run's of it). */
const EARLIEST_RUN_MS = Date.UTC(2024, 0, 1)

/**
 * The events a resume owes, from after its cursor to the last one accepted when it began, each
 * made only when read: a resume is written as its client reads, and made whole at once it held
 * every event it owed (a resume from far back in a million-event log, hundreds of megabytes) for
 * as long as its client took, once per stream. One the log drops before it is read (its
 * retention, while the client was slow) ends the reading, with `overtaken` set: the stream then
 * ends, and its client's next resume gets a reset. It is a cursor: read once, in slices or whole.
 */
export class ResumedEvents implements Iterable<LiveEvent> {
  #nextSeq: number
  readonly #lastSeq: number
  readonly #eventAt: (seq: number) => LiveEvent | null | undefined
  overtaken = false

  constructor (afterSeq: number, lastSeq: number, eventAt: (seq: number) => LiveEvent | null | undefined) {
    this.#nextSeq = afterSeq + 1
    this.#lastSeq = lastSeq
    this.#eventAt = eventAt
  }

  /** Every event owed has been taken (or the log dropped one first: `overtaken`). */
  get done (): boolean {
    return this.#nextSeq > this.#lastSeq
  }

  /**
   * The kept events among the next `count` events of the log (fewer at the end), each read as it
   * is taken: a filter that keeps few of them still reads the log a bounded slice at a time.
   */
  * slice (count: number): Generator<LiveEvent> {
    const end = Math.min(this.#nextSeq + count - 1, this.#lastSeq)
    while (this.#nextSeq <= end) {
      const event = this.#eventAt(this.#nextSeq++)
      if (event === undefined) {
        this.overtaken = true
        this.#nextSeq = this.#lastSeq + 1
        return
      }
      if (event !== null) yield event
    }
  }

  [Symbol.iterator] (): Iterator<LiveEvent> {
    return this.slice(Number.POSITIVE_INFINITY)
  }
}
