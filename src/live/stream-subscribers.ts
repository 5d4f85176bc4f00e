import type { Socket } from 'node:net'
import { setImmediate as checkPhase } from 'node:timers/promises'
import type { Message } from '../../schemas/message.js'
import type { Principal } from '../auth/principal.js'
import type { AskedEntities } from './asked-entities.js'
import type { EntitySelection, EventQuery } from '../store/event-store.js'
import { matchesFilters } from '../store/store-contract.js'
import type { KnownEntities } from '../store/store-contract.js'
import { cursorFrame, DeliveryFrames } from './delivery-frames.js'
import { DeliveryIndex } from './delivery-index.js'
import type { LiveEvent } from './live-event.js'
import { SharedStreamFilters } from './shared-stream-filters.js'
import { writeWaiting } from './write-waiting.js'

/** What a stream asks for: the events endpoint's entity selection and exclusive filter. */
export interface StreamFilter {
  entities: EntitySelection | undefined
  /** A scoped token's visible entities. */
  scope?: EntitySelection | undefined
  category?: Message['message_category'] | undefined
  messageCodes?: ReadonlySet<string> | undefined
}

export interface StreamLimits {
  maxClients: number
  /** Of them, at most this many opened with one token (Principal.key): no consumer takes every place. */
  maxClientsPerToken: number
  /** A subscriber whose unsent data passes this is disconnected. */
  maxBufferBytes: number
  /**
   * The unsent data of all streams together (frames shared by streams of one filter counted
   * once): past it, the streams furthest behind are disconnected until it is under 3/4 of it.
   */
  maxUnsentBytes: number
  heartbeatMs: number
}

export interface StreamLog {
  info (details: object, message: string): void
}

/**
 * Why streams were cut for the provider's sake (the `stream_disconnects_total` metric): their
 * own bound passed (STREAM_MAX_BUFFER_BYTES, a client that does not read), the bound of all
 * passed (STREAM_MAX_UNSENT_BYTES), or a delivery too large for their bound (ended cleanly).
 */
export type StreamCut = 'own_bound' | 'all_bound' | 'too_large'

/**
 * Why a stream is ended when one delivery's frames for it pass STREAM_MAX_BUFFER_BYTES: no
 * client could take them within its bound, and each filter's frames are its own (streams of one
 * filter share them). 300 streams of different filters that did not read, given one ingest of
 * 60,000 events, took the provider from 140 MB to 4.1 GB and held its event loop for 17 s. Its
 * client resumes with Last-Event-ID, from the log, in chunks written as it reads.
 */
const TOO_LARGE = 'a delivery larger than its bound: it resumes with Last-Event-ID'

/** A named event (item_errors, reset) as a stream frame. */
export function namedFrame (event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

const HEARTBEAT_FRAME = Buffer.from(': keep-alive\n\n')

/** Streams written a heartbeat in one turn of the event loop: about 8 ms. */
export const HEARTBEATS_PER_TURN = 1000

/** How long an ended stream's client has to close its side before the connection is destroyed. */
const END_GRACE_MS = 2000

/**
 * The head of a stream's answer, written straight to its socket: no chunked encoding (the
 * connection's end ends the answer), so each frame is one socket write of bytes shared by every
 * stream with the same filter. At 10,000 streams, ServerResponse's per-write work (chunk framing,
 * and each frame encoded per stream) was most of the provider's CPU.
 */
export function streamHead (extraHeaders: Record<string, unknown>): string {
  let head = 'HTTP/1.1 200 OK\r\n' +
    'Content-Type: text/event-stream; charset=utf-8\r\n' +
    'Cache-Control: no-cache\r\n' +
    // Proxies that buffer answers (nginx) pass this one on as it comes.
    'X-Accel-Buffering: no\r\n' +
    'Connection: close\r\n'
  // Headers hooks set before the stream began (CORS, rate limits), as Fastify would have sent them.
  for (const [name, value] of Object.entries(extraHeaders)) {
    if (value === undefined || /^(content-type|content-length|cache-control|connection|transfer-encoding)$/i.test(name)) continue
    for (const item of Array.isArray(value) ? value : [value]) head += `${name}: ${String(item).replace(/[\r\n]/g, ' ')}\r\n`
  }
  return head + '\r\n'
}

/** Who opened a stream, for the checks made again while it is open. */
export interface StreamOpener {
  /** Its token's key in the token directory; undefined for a token the directory does not hold (a JWT). */
  directoryKey: string | undefined
  principal: Principal
  /** What it asked for that a reloaded registry can give another meaning; undefined: nothing. */
  asked?: AskedEntities | undefined
}

/**
 * One open stream. While it replays stored events (start_date) or what it missed (Last-Event-ID),
 * live events wait in `held`; once those are written they follow, and it goes on live. Events up
 * to `afterSeq` were in its replay or resume already (or came before it began): not sent again.
 */
export class StreamSubscriber {
  readonly socket: Socket
  readonly filter: StreamFilter
  /** Subscribers with the same key share the frames built for them. */
  readonly key: string
  held: LiveEvent[] | undefined
  readonly heldIds = new Set<string>()
  /**
   * IDs its replay sent while an ingest of them was on its way: if that ingest publishes one, the
   * stream has it already (each ID is published once, so an ID leaves the set when skipped). Only
   * IDs of ingests in progress during its replay, and matching its filter, are ever kept here.
   */
  readonly replayedWhileWritten = new Set<string>()
  /**
   * While a start_date replay runs: the date_time from which its client must backfill with the
   * events endpoint if the stream ends before the replay is written (the last one sent, or
   * start_date), said in a `reset` frame before the end.
   */
  replayFrom: string | undefined
  heldBytes = 0
  closed = false
  /**
   * Text of its own may wait in its socket (a replay's, a resume's, a named frame): its unsent
   * data is then counted as its own, not as its filter's shared frames (StreamSubscribers).
   */
  unsentOwnText = false
  afterSeq: number
  readonly #query: EventQuery

  /**
   * Who opened it: the key of its token in the token directory (undefined for a JWT), and what
   * that token was let see; re-checked when the tokens or the registry change (plugins/live-events.ts).
   */
  readonly opener: StreamOpener | undefined

  constructor (socket: Socket, filter: StreamFilter, key: string, afterSeq: number, opener?: StreamOpener) {
    this.opener = opener
    this.socket = socket
    this.afterSeq = afterSeq
    this.filter = filter
    this.key = key
    this.#query = { startMs: 0, endMs: 0, ...filter }
  }

  matches (message: Message): boolean {
    return matchesFilters(this.#query, message)
  }
}

/**
 * The open streams of this process. Accepted events are written to each matching stream as they
 * come, one write per stream per batch of events (a delivery's frames made once, each distinct
 * filter's copied from them and shared by its streams). A stream's unsent data is bounded: past
 * `maxBufferBytes` the client is disconnected (it resumes with Last-Event-ID once it reads again),
 * and so are the streams furthest behind once all of theirs passes `maxUnsentBytes`.
 */
export class StreamSubscribers {
  readonly #limits: StreamLimits
  readonly #log: StreamLog
  readonly #streams = new Set<StreamSubscriber>()
  readonly #heartbeat: NodeJS.Timeout
  #ended = false
  /** A heartbeat is under way (#beat): the next one waits for the interval after it. */
  #beating = false

  /** Open streams by the key of the token that opened them. */
  readonly #byToken = new Map<string, number>()

  /** The distinct filters of the streams, each one object with a short key, shared by its streams. */
  readonly filters = new SharedStreamFilters()

  /** Streams that had unsent data after a write: those the streams' unsent data can be in. */
  readonly #behind = new Set<StreamSubscriber>()

  /**
   * At least the streams' unsent data: what it was when last counted, plus what writes left
   * unsent since. Counted exactly (#countUnsent) once it passes STREAM_MAX_UNSENT_BYTES.
   */
  #unsentEstimate = 0

  /** How much of each shared frame (a Buffer) is in the estimate: the most any stream of its filter left unsent. */
  readonly #estimatedFrames = new WeakMap<Buffer, number>()

  readonly #counted: (cut: StreamCut, streams: number) => void

  /** The seq through which every delivery has been handed to the streams (deliver). */
  #deliveredThrough = 0

  /**
   * The first seq delivered since the last reload (registryReloaded) of an event this process's
   * registry did not know: another worker or instance, reloaded first, accepted it. A cursor
   * given on a reload's end is never past it, so that the stream's resume, judged by the
   * reloaded registry, has it (a review's finding); a stream may get again what followed it.
   */
  #heldBackFrom: number | undefined

  constructor (limits: StreamLimits, log: StreamLog, counted: (cut: StreamCut, streams: number) => void = () => {}) {
    this.#limits = limits
    this.#log = log
    this.#counted = counted
    this.#heartbeat = setInterval(() => { this.#beat().catch((error: unknown) => { this.#log.info({ err: error }, 'a heartbeat failed') }) }, limits.heartbeatMs)
    this.#heartbeat.unref()
  }

  /**
   * A heartbeat: the keep-alive comment to every stream, HEARTBEATS_PER_TURN of them a turn of the
   * event loop (10,000 streams took 78–113 ms in one turn, a black-box attacker's session,
   * 2026-11-28), then the unsent data counted.
   */
  async #beat (): Promise<void> {
    if (this.#beating) return
    this.#beating = true
    try {
      let written = 0
      // Those open now; one that ends meanwhile is passed over.
      for (const stream of [...this.#streams]) {
        if (!this.#streams.has(stream)) continue
        this.write(stream, HEARTBEAT_FRAME)
        if (++written % HEARTBEATS_PER_TURN === 0) await checkPhase()
      }
      // Streams that have caught up leave #behind, and the estimate is exact again.
      if (this.#behind.size > 0 || this.#unsentEstimate > 0) this.#countUnsent()
    } finally {
      this.#beating = false
    }
  }

  get count (): number {
    return this.#streams.size
  }

  /** The streams' unsent data as last estimated (the `stream_unsent_bytes` metric). */
  get unsentBytes (): number {
    return this.#unsentEstimate
  }

  get full (): boolean {
    return this.#streams.size >= this.#limits.maxClients
  }

  /** Whether the token of this key (Principal.key) has all the streams one token may have. */
  fullFor (key: string): boolean {
    return (this.#byToken.get(key) ?? 0) >= this.#limits.maxClientsPerToken
  }

  add (stream: StreamSubscriber): void {
    if (this.#streams.has(stream)) return
    // The provider is shutting down (endAll): a stream opened meanwhile ends as the others did.
    if (this.#ended) {
      stream.closed = true
      stream.socket.end()
      return
    }
    this.#streams.add(stream)
    const key = stream.opener?.principal.key
    if (key !== undefined) this.#byToken.set(key, (this.#byToken.get(key) ?? 0) + 1)
  }

  remove (stream: StreamSubscriber): void {
    stream.closed = true
    this.#behind.delete(stream)
    if (!this.#streams.delete(stream)) return
    const key = stream.opener?.principal.key
    if (key === undefined) return
    const left = this.#byToken.get(key)! - 1
    if (left === 0) this.#byToken.delete(key)
    else this.#byToken.set(key, left)
  }

  /** Hands accepted events, those of known entities only, to every stream that wants them. */
  deliver (events: readonly LiveEvent[], cursorOf: (seq: number) => string, known: KnownEntities, nothingBeingWritten = false): void {
    if (events.length === 0) return
    this.#deliver(events, cursorOf, known, nothingBeingWritten)
    this.#deliveredThrough = Math.max(this.#deliveredThrough, events[events.length - 1]!.seq)
  }

  #deliver (events: readonly LiveEvent[], cursorOf: (seq: number) => string, known: KnownEntities, nothingBeingWritten: boolean): void {
    if (this.#streams.size === 0) return
    const served = events.filter(({ message }) => known.knowsEntityOf(message))
    if (served.length < events.length && this.#heldBackFrom === undefined) this.#heldBackFrom = events.find(({ message }) => !known.knowsEntityOf(message))!.seq
    if (served.length === 0) return
    const firstSeq = served[0]!.seq
    // null: larger than a stream's bound (TOO_LARGE).
    const frames = new Map<string, Buffer | null>()
    let index: DeliveryIndex | undefined
    let delivery: DeliveryFrames | undefined
    const tooLarge: StreamSubscriber[] = []
    for (const stream of this.#streams) {
      if (stream.afterSeq >= firstSeq || stream.replayedWhileWritten.size > 0) {
        // It began after some of these were accepted (they were in its resume or replay), or its
        // replay sent some of them already.
        const sent = stream.replayedWhileWritten
        const places: number[] = []
        for (let i = 0; i < served.length; i++) if (served[i]!.seq > stream.afterSeq && !sent.delete(served[i]!.message.message_id)) places.push(i)
        if (places.length === 0) {
          if (nothingBeingWritten && stream.held === undefined) sent.clear()
          continue
        }
        if (stream.held !== undefined) {
          this.#hold(stream, places.map((i) => served[i]!))
        } else {
          delivery ??= new DeliveryFrames(served, cursorOf)
          const frame = delivery.framesFor((message) => stream.matches(message), places, this.#limits.maxBufferBytes)
          if (frame === undefined) tooLarge.push(stream)
          else if (frame.length > 0) {
            // Made for this stream alone: its own.
            this.write(stream, frame, true)
          }
        }
        // With no ingest on its way, every one that was during its replay has published (this
        // delivery is the last of them): nothing more to look for, and it shares frames again.
        if (nothingBeingWritten && stream.held === undefined) sent.clear()
        continue
      }
      if (stream.held !== undefined) {
        this.#hold(stream, served)
        continue
      }
      let frame = frames.get(stream.key)
      if (frame === undefined) {
        index ??= new DeliveryIndex(served)
        delivery ??= new DeliveryFrames(served, cursorOf)
        // Past the stream's bound it is ended instead (TOO_LARGE): made no further.
        frame = delivery.framesFor((message) => stream.matches(message), index.candidates(stream.filter), this.#limits.maxBufferBytes) ?? null
        frames.set(stream.key, frame)
      }
      if (frame === null) tooLarge.push(stream)
      else if (frame.length > 0) this.write(stream, frame)
    }
    // One line for them all: a large ingest can end thousands at once.
    if (tooLarge.length > 0) {
      this.#log.info({ streams: tooLarge.length, reason: TOO_LARGE, tokens: tokenNamesOf(tooLarge) }, 'streams ended')
      // Each is given its cursor, what came before this delivery (which it had): a stream that had
      // no event yet had none to resume from, and lost the delivery without a word (a helper's
      // black-box attack, 2026-11-28). Written here and on a reload's ends (endWhere), not on a
      // shutdown: a client's parser may take such a frame for an empty message.
      for (const stream of tooLarge) this.end(stream, TOO_LARGE, false, cursorFrame(cursorOf(Math.max(stream.afterSeq, firstSeq - 1))))
      this.#counted('too_large', tooLarge.length)
    }
  }

  /** Keeps the events a stream wants until its resume or replay is written; too many, and it is dropped. */
  #hold (stream: StreamSubscriber, events: readonly LiveEvent[]): void {
    for (const event of events) {
      if (!stream.matches(event.message)) continue
      stream.held!.push(event)
      stream.heldIds.add(event.message.message_id)
      stream.heldBytes += event.json.length
    }
    if (stream.heldBytes > this.#limits.maxBufferBytes) {
      this.#drop(stream, 'too many live events waiting behind its resume or replay')
      this.#counted('own_bound', 1)
    }
  }

  /**
   * Writes to one stream; false (and the stream dropped) when its unsent data had passed the
   * bound, so what waits for one client is at most the bound plus one write.
   */
  write (stream: StreamSubscriber, frame: string | Buffer, own = typeof frame === 'string'): boolean {
    if (stream.closed) return false
    if (stream.socket.writableLength > this.#limits.maxBufferBytes) {
      this.#drop(stream, 'the client does not read its stream')
      this.#counted('own_bound', 1)
      return false
    }
    // Nothing waits: no text of its own either.
    if (stream.socket.writableLength === 0) stream.unsentOwnText = false
    stream.socket.write(frame)
    if (own) {
      stream.unsentOwnText = true
      this.#queued(stream, frame.length)
    } else {
      // A shared frame: in the estimate as much as the stream furthest behind holds of it.
      const unsent = Math.min(frame.length, stream.socket.writableLength)
      const counted = this.#estimatedFrames.get(frame as Buffer) ?? 0
      if (unsent > counted) {
        this.#estimatedFrames.set(frame as Buffer, unsent)
        this.#queued(stream, unsent - counted)
      } else if (unsent > 0) {
        this.#behind.add(stream)
      }
    }
    return true
  }

  /**
   * A frame of a stream's replay or resume, written as writeWaiting writes it (waiting for a
   * slow reader), and counted with the streams' unsent data.
   */
  async writeWaiting (stream: StreamSubscriber, frame: string): Promise<void> {
    if (stream.closed) return
    if (stream.socket.writableLength === 0) stream.unsentOwnText = false
    const written = writeWaiting(stream.socket, frame, this.#limits.maxBufferBytes)
    stream.unsentOwnText = true
    this.#queued(stream, frame.length)
    await written
  }

  /** After a write of `length`: what it left unsent counts toward STREAM_MAX_UNSENT_BYTES. */
  #queued (stream: StreamSubscriber, length: number): void {
    const unsent = stream.socket.writableLength
    if (unsent === 0 || stream.closed) return
    this.#behind.add(stream)
    this.#unsentEstimate += Math.min(length, unsent)
    if (this.#unsentEstimate > this.#limits.maxUnsentBytes) this.#countUnsent()
  }

  /**
   * Counts the streams' unsent data: each stream's own text as its own, and the frames streams
   * of one filter share once (their unsent data is the end of the same frames: the stream
   * furthest behind holds what all of them do). Over 7/8 of STREAM_MAX_UNSENT_BYTES, the streams
   * furthest behind are disconnected until it is under 3/4 of it: the next count comes only after
   * at least 1/8 more, so a count (a pass over the streams behind) is never made for every write.
   * Without this bound, one consumer's streams of distinct filters that did not read took each
   * its own STREAM_MAX_BUFFER_BYTES and one delivery more: 496 of them, eight ingests of 3,000
   * events, 1.46 GB (20 GiB at 10,000 streams).
   */
  #countUnsent (): void {
    const limit = this.#limits.maxUnsentBytes
    const behind: Array<{ stream: StreamSubscriber, unsent: number, group: string | StreamSubscriber }> = []
    const groups = new Map<string | StreamSubscriber, number[]>()
    for (const stream of this.#behind) {
      const unsent = stream.socket.writableLength
      if (unsent === 0) {
        this.#behind.delete(stream)
        stream.unsentOwnText = false
        continue
      }
      const group = stream.unsentOwnText ? stream : stream.key
      behind.push({ stream, unsent, group })
      let lengths = groups.get(group)
      if (lengths === undefined) groups.set(group, lengths = [])
      lengths.push(unsent)
    }
    let total = 0
    for (const lengths of groups.values()) {
      lengths.sort((a, b) => b - a)
      total += lengths[0]!
    }
    if (total > limit * 7 / 8) {
      // Furthest behind first: a group holds what its member furthest behind does, so dropping
      // that one frees down to the next one's.
      behind.sort((a, b) => b.unsent - a.unsent)
      const taken = new Map<string | StreamSubscriber, number>()
      const dropped: StreamSubscriber[] = []
      const unsentBefore = total
      for (const { stream, group } of behind) {
        if (total <= limit * 3 / 4) break
        const lengths = groups.get(group)!
        const next = (taken.get(group) ?? 0) + 1
        taken.set(group, next)
        total -= lengths[next - 1]! - (lengths[next] ?? 0)
        dropped.push(stream)
      }
      this.#log.info({ streams: dropped.length, unsentBytes: unsentBefore, maxUnsentBytes: limit, tokens: tokenNamesOf(dropped) }, 'stream clients disconnected: the streams\' unsent data passed STREAM_MAX_UNSENT_BYTES, those furthest behind first')
      for (const stream of dropped) this.#drop(stream, '', false)
      this.#counted('all_bound', dropped.length)
    }
    this.#unsentEstimate = total
  }

  /**
   * Ends, cleanly, the streams for which `stale` says so (their token revoked, expired or scoped
   * otherwise now): each client reconnects with Last-Event-ID, and is let in, or not, as its
   * token now says, missing nothing it may see. With `cursorOf`, a live stream is given its
   * cursor (end): one that had had no event had none to resume from.
   */
  endWhere (stale: (stream: StreamSubscriber) => boolean, reason: string, cursorOf?: (seq: number) => string): void {
    for (const stream of [...this.#streams]) {
      if (!stale(stream)) continue
      // Where a live stream is: what was accepted before it began, and every delivery since.
      // Not 0: a worker started again after a crash knows no seq of the cluster's until its
      // first delivery, and a cursor of 0 would resume every event the others keep.
      const through = Math.max(stream.afterSeq, this.#heldBackFrom === undefined ? this.#deliveredThrough : Math.min(this.#deliveredThrough, this.#heldBackFrom - 1))
      this.end(stream, reason, true, cursorOf === undefined || through === 0 ? undefined : cursorFrame(cursorOf(through)))
    }
  }

  /**
   * Ends one stream: a replay still running says from when to backfill first (`reset`, as for a
   * cursor too old to resume), since its frames carry the cursor of its start; a live stream is
   * given `cursorFrame` when there is one (deliver); then the connection is ended, and destroyed
   * soon after if the client leaves it half open (it no longer counts against
   * STREAM_MAX_CLIENTS, so it must not outlive that).
   */
  end (stream: StreamSubscriber, reason: string, logged = true, cursorFrame?: string): void {
    if (stream.closed) return
    if (logged) this.#log.info({ reason, token: stream.opener?.principal.name }, 'stream ended')
    if (stream.replayFrom !== undefined) stream.socket.write(namedFrame('reset', { since: stream.replayFrom }))
    else if (cursorFrame !== undefined && stream.held === undefined) stream.socket.write(cursorFrame)
    this.remove(stream)
    const { socket } = stream
    socket.end()
    setTimeout(() => { socket.destroy() }, END_GRACE_MS).unref()
  }

  /** The registry was reloaded and the streams it concerns ended: what was held back until now is judged again by their resumes. */
  registryReloaded (): void {
    this.#heldBackFrom = undefined
  }

  /** Whether endAll has run: the provider is shutting down. */
  get ended (): boolean {
    return this.#ended
  }

  /** Ends every stream cleanly (shutdown): clients reconnect, to another instance or to this one once back. */
  endAll (): void {
    this.#ended = true
    clearInterval(this.#heartbeat)
    for (const stream of this.#streams) {
      // A replay cut short says from when to backfill, as end() does: its frames carry the cursor of its start.
      if (stream.replayFrom !== undefined) stream.socket.write(namedFrame('reset', { since: stream.replayFrom }))
      this.remove(stream)
      stream.socket.end()
    }
  }

  #drop (stream: StreamSubscriber, reason: string, logged = true): void {
    if (logged) this.#log.info({ unsentBytes: stream.socket.writableLength, reason, token: stream.opener?.principal.name }, 'stream client disconnected')
    this.remove(stream)
    stream.socket.destroy()
  }
}

/** The names of the tokens that opened these streams, each once, for a log line about many (at most 10). */
function tokenNamesOf (streams: readonly StreamSubscriber[]): string[] {
  const names = new Set<string>()
  for (const stream of streams) {
    const name = stream.opener?.principal.name
    if (name !== undefined) names.add(name)
    if (names.size === 10) break
  }
  return [...names]
}
