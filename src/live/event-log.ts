import type { Message } from '../../schemas/message.js'
import { encodeMessage } from '../store/message-json.js'
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
  | { events: readonly LiveEvent[] }
  /** The cursor is older than what is kept, or not this log's: backfill from `since` with the events endpoint. */
  | { since: string }

const MINUTE_MS = 60_000

/** The log's first room, in events; it doubles up to the retention's count. */
const INITIAL_CAPACITY = 1024

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
   * The kept events' seqs and messages, not their JSON: a million JSON strings kept in the heap
   * were a third of what the collector copied per ingested event (BENCHMARKS.md, "What profiling
   * found"). A resumed event's JSON is made again from its message, which gives the same bytes
   * (LiveEvent.json is always the message's wire form, encodeMessage's), and only for the events a
   * resuming stream's filter keeps.
   *
   * A ring: the oldest kept event at #head, #count of them, wrapping at the arrays' length; it
   * doubles while it holds fewer than the retention's count, and once it does, each new event
   * takes the slot of the one dropped for it. An array that grew and was compacted by copying a
   * million entries was a tenth of an ingest's profile.
   */
  #seqs = new Float64Array(INITIAL_CAPACITY)
  #acceptedAt = new Float64Array(INITIAL_CAPACITY)
  #messages: Array<Message | undefined> = new Array(INITIAL_CAPACITY)
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
    for (const event of events) {
      if (event.seq <= this.#lastSeq) continue
      if (this.#count >= maxEvents && this.#count > 0) this.#dropOldest()
      if (this.#count === this.#seqs.length) this.#grow()
      const slot = this.#slot(this.#count)
      this.#seqs[slot] = event.seq
      this.#acceptedAt[slot] = now
      this.#messages[slot] = event.message
      this.#count++
      this.#lastSeq = event.seq
    }
    this.#dropExpired(now)
  }

  /**
   * What a client that last saw `cursor` is owed: of the events after it, those `keep` keeps (the
   * stream's filter; only those are handed out, so a resume from far back holds nothing for the
   * events it would skip).
   */
  resume (cursor: string, now = Date.now(), keep?: (message: Message) => boolean): Resumption {
    this.#dropExpired(now)
    const seq = this.#seqOf(cursor)
    if (seq === undefined || seq > this.#lastSeq) return { since: this.#since(0) }
    const firstSeq = this.#firstSeq()
    // Events after the cursor were dropped, or came before this process joined the log.
    if (seq < firstSeq - 1) return { since: this.#since(seq) }
    const events: LiveEvent[] = []
    for (let i = seq + 1 - firstSeq; i < this.#count; i++) {
      const slot = this.#slot(i)
      const message = this.#messages[slot]!
      if (keep === undefined || keep(message)) events.push(new LoggedEvent(this.#seqs[slot]!, message))
    }
    return { events }
  }

  /** The slot of the i-th kept event (0: the oldest). */
  #slot (i: number): number {
    const slot = this.#head + i
    return slot < this.#seqs.length ? slot : slot - this.#seqs.length
  }

  /** Twice the room, the kept events moved to its start in order. */
  #grow (): void {
    const capacity = Math.min(this.#seqs.length * 2, Math.max(this.#retention.events, this.#seqs.length + 1))
    const seqs = new Float64Array(capacity)
    const acceptedAt = new Float64Array(capacity)
    const messages: Array<Message | undefined> = new Array(capacity)
    for (let i = 0; i < this.#count; i++) {
      const slot = this.#slot(i)
      seqs[i] = this.#seqs[slot]!
      acceptedAt[i] = this.#acceptedAt[slot]!
      messages[i] = this.#messages[slot]
    }
    this.#seqs = seqs
    this.#acceptedAt = acceptedAt
    this.#messages = messages
    this.#head = 0
  }

  #dropOldest (): void {
    const head = this.#head
    this.#markDropped(this.#seqs[head]!, this.#messages[head]!)
    this.#messages[head] = undefined
    this.#head = head + 1 === this.#seqs.length ? 0 : head + 1
    this.#count--
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
   * replay, together with every kept one (the stream goes on live after a reset, so the
   * backfill covers them too); for a cursor that is not this log's, of every event it knows and
   * of the log's own beginning.
   */
  #since (seq: number): string {
    let earliest = Number.POSITIVE_INFINITY
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
    for (let i = 0; i < this.#count; i++) {
      const ms = Date.parse(this.#messages[this.#slot(i)]!.date_time)
      if (ms < earliest) earliest = ms
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

  #markDropped (seq: number, message: Message): void {
    const minuteMs = this.#minuteOf(message.date_time)
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

  /** The last minute parsed, by its text: events dropped one after another mostly share it. */
  #minuteText = ''
  #minuteMs = 0

  /** The date-time's minute, floored; parsed once per minute for wire-form (UTC) date-times. */
  #minuteOf (dateTime: string): number {
    const wire = dateTime.length === 24 && dateTime.charCodeAt(23) === 0x5a // ...Z
    if (wire && this.#minuteText !== '' && dateTime.startsWith(this.#minuteText)) return this.#minuteMs
    const minuteMs = Math.floor(Date.parse(dateTime) / MINUTE_MS) * MINUTE_MS
    if (wire) {
      this.#minuteText = dateTime.slice(0, 17) // through the minute and its colon
      this.#minuteMs = minuteMs
    }
    return minuteMs
  }
}

/** A kept event as a resume hands it out: its JSON made when it is read. */
class LoggedEvent implements LiveEvent {
  readonly seq: number
  readonly message: Message

  constructor (seq: number, message: Message) {
    this.seq = seq
    this.message = message
  }

  get json (): string {
    return encodeMessage(this.message)
  }
}
