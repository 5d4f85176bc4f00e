import type { Message } from '../../schemas/message.js'
import type { StoredEvent } from '../data/event-lines.js'
import { jsonTextOf, type JsonBytes } from '../data/json-bytes.js'
import type { LiveEvent, LiveSource } from './live-event.js'

/** An accepted event on its way to the bus: the message and its wire JSON (and, as LiveEvent has them, its time and bytes). */
export interface AcceptedEvent {
  readonly message: Message
  readonly json: string
  readonly epochMs?: number | undefined
  readonly bytes?: JsonBytes | undefined
}

/**
 * An event this process stored, with its wire JSON as the store took it (bytes): its message
 * and its text are made when a live channel first reads them (a stream, MQTT, another worker).
 * With none of those, an ingest makes neither (the event log keeps a copy of the bytes). The
 * bytes (a view of the request's body) are let go once the text is made; until then they live
 * as long as the event is on its way, a turn or two.
 */
export class WrittenEvent implements AcceptedEvent, LiveEvent {
  readonly epochMs: number
  /** Until its message is read: the event, which may hold the whole request's body (a WireEvent). */
  #event: StoredEvent | undefined
  #message: Message | undefined
  /** Until its text is made: its JSON, a view of the request's body. */
  #bytes: JsonBytes | undefined
  #json: string | undefined
  /** Its place in the order of acceptance, once the bus gave it one (LocalBus: it is then its own LiveEvent). */
  seq = 0

  constructor (event: StoredEvent, bytes: JsonBytes) {
    this.epochMs = event.epochMs
    this.#event = event
    this.#bytes = bytes
  }

  /**
   * Made (or read) once, then the event is let go: what a stream holds behind its replay keeps
   * its message and text, not the body of 1,000 events each came in (its bound counts the text).
   */
  get message (): Message {
    if (this.#message === undefined) {
      this.#message = this.#event!.message
      this.#event = undefined
    }
    return this.#message
  }

  get bytes (): JsonBytes | undefined {
    return this.#bytes
  }

  get json (): string {
    if (this.#json === undefined) {
      this.#json = jsonTextOf(this.#bytes!)
      this.#bytes = undefined
    }
    return this.#json
  }
}

export type LiveListener = (events: readonly LiveEvent[], source: LiveSource) => void

/** The broker as this provider sees it (readiness, metrics); undefined without MQTT. */
export interface BrokerStatus {
  connected: boolean
  /** Events waiting to be published or acknowledged. */
  waiting: number
  /** Events dropped since start because more than MQTT_QUEUE_MAX waited. */
  dropped: number
}

/**
 * How a process of the provider hears of accepted events, its own and everyone else's, each
 * with its place in one order of acceptance. In one process the bus is in that process
 * (LocalBus); with WORKERS > 1 the cluster's primary holds it and the workers reach it over IPC
 * (cluster-bus.ts). Either way, with MQTT_URL it also publishes to the broker and hears the
 * events other provider instances publish there.
 */
export interface LiveBus {
  /** The id of the log whose seqs this bus hands out (the stream's cursors carry it). */
  readonly logId: string
  /** Events this process accepted and made durable. */
  publish (events: readonly AcceptedEvent[]): void
  /** Every accepted event, in acceptance order. */
  listen (listener: LiveListener): void
  /** Runs `write` while no other process of this provider writes to the store. */
  exclusive<T> (write: () => Promise<T>): Promise<T>
  /**
   * For a provider of several processes: `take` runs with the write lock held when another
   * process of the provider died (it may have written events and died before announcing them),
   * at the death and before this process's next write, until it has run once without failing.
   */
  onProcessDied? (take: () => Promise<void>): void
  brokerStatus (): BrokerStatus | undefined
  /**
   * A shutdown's last wait before its streams end: resolves once the other processes of this
   * provider that are stopping too have handed this one every event they accepted (their
   * ingests under way done), or after `timeoutMs`. At once for a provider of one process.
   */
  settled (timeoutMs: number): Promise<void>
  close (): Promise<void>
}

/** A new log id: the time it began, in base 36 (a cursor of an earlier run is told apart by it). */
export function newLogId (): string {
  return Date.now().toString(36)
}

/** Runs tasks one at a time, in the order given. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve()

  run<T> (task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task)
    this.#tail = result.catch(() => {})
    return result
  }
}
