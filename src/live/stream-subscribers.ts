import type { ServerResponse } from 'node:http'
import type { Message } from '../../schemas/message.js'
import type { EntitySelection, EventQuery } from '../store/event-store.js'
import { matchesFilters } from '../store/store-contract.js'
import type { KnownEntities } from '../store/store-contract.js'
import type { LiveEvent } from './live-event.js'

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
  /** A subscriber whose unsent data passes this is disconnected. */
  maxBufferBytes: number
  heartbeatMs: number
}

export interface StreamLog {
  info (details: object, message: string): void
}

/** One event as a stream frame. */
export function messageFrame (cursor: string, json: string): string {
  return `id: ${cursor}\nevent: message\ndata: ${json}\n\n`
}

/** A named event (item_errors, reset) as a stream frame. */
export function namedFrame (event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

const HEARTBEAT_FRAME = ': keep-alive\n\n'

/**
 * One open stream. While it replays stored events (start_date), live events wait in `held`; once
 * the replay is written they follow, and it goes on live.
 */
export class StreamSubscriber {
  readonly response: ServerResponse
  readonly filter: StreamFilter
  /** Subscribers with the same key share the frames built for them. */
  readonly key: string
  held: LiveEvent[] | undefined
  readonly heldIds = new Set<string>()
  heldBytes = 0
  closed = false
  readonly #query: EventQuery

  constructor (response: ServerResponse, filter: StreamFilter, key: string) {
    this.response = response
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
 * come, one write per stream per batch of events (frames built once per distinct filter). A
 * stream's unsent data is bounded: past `maxBufferBytes` the client is disconnected (it resumes
 * with Last-Event-ID once it reads again), so a client that does not read costs a bounded amount.
 */
export class StreamSubscribers {
  readonly #limits: StreamLimits
  readonly #log: StreamLog
  readonly #streams = new Set<StreamSubscriber>()
  readonly #heartbeat: NodeJS.Timeout

  constructor (limits: StreamLimits, log: StreamLog) {
    this.#limits = limits
    this.#log = log
    this.#heartbeat = setInterval(() => {
      for (const stream of this.#streams) this.write(stream, HEARTBEAT_FRAME)
    }, limits.heartbeatMs)
    this.#heartbeat.unref()
  }

  get count (): number {
    return this.#streams.size
  }

  get full (): boolean {
    return this.#streams.size >= this.#limits.maxClients
  }

  add (stream: StreamSubscriber): void {
    this.#streams.add(stream)
  }

  remove (stream: StreamSubscriber): void {
    stream.closed = true
    this.#streams.delete(stream)
  }

  /** Hands accepted events, those of known entities only, to every stream that wants them. */
  deliver (events: readonly LiveEvent[], cursorOf: (seq: number) => string, known: KnownEntities): void {
    if (this.#streams.size === 0) return
    const served = events.filter(({ message }) => known.knowsEntityOf(message))
    if (served.length === 0) return
    const frames = new Map<string, string>()
    for (const stream of this.#streams) {
      if (stream.held !== undefined) {
        for (const event of served) {
          if (!stream.matches(event.message)) continue
          stream.held.push(event)
          stream.heldIds.add(event.message.message_id)
          stream.heldBytes += event.json.length
        }
        if (stream.heldBytes > this.#limits.maxBufferBytes) this.#drop(stream, 'too many live events waiting behind the replay')
        continue
      }
      let frame = frames.get(stream.key)
      if (frame === undefined) {
        frame = ''
        for (const event of served) if (stream.matches(event.message)) frame += messageFrame(cursorOf(event.seq), event.json)
        frames.set(stream.key, frame)
      }
      if (frame !== '') this.write(stream, frame)
    }
  }

  /**
   * Writes to one stream; false (and the stream dropped) when its unsent data had passed the
   * bound, so what waits for one client is at most the bound plus one write.
   */
  write (stream: StreamSubscriber, frame: string): boolean {
    if (stream.closed) return false
    if (stream.response.writableLength > this.#limits.maxBufferBytes) {
      this.#drop(stream, 'the client does not read its stream')
      return false
    }
    stream.response.write(frame)
    return true
  }

  /** Ends every stream cleanly (shutdown): clients reconnect, to another instance or to this one once back. */
  endAll (): void {
    clearInterval(this.#heartbeat)
    for (const stream of this.#streams) {
      this.remove(stream)
      stream.response.end()
    }
  }

  #drop (stream: StreamSubscriber, reason: string): void {
    this.#log.info({ unsentBytes: stream.response.writableLength, reason }, 'stream client disconnected')
    this.remove(stream)
    stream.response.destroy()
  }
}
