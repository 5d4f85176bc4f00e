import { StoreUnavailableError, type EventBatch, type EventQuery, type EventStore, type StoreHealth } from '../event-store.js'
import type { IngestEvent, WriteOutcome } from '../event-writer.js'
import type { StoreLog } from '../store-descriptor.js'
import type { InfluxBackend } from './influx-backend.js'
import { InfluxEventWriter, type IndexAnswer } from './influx-event-writer.js'
import { KnownIndex } from './known-events.js'
import { unavailable } from './influx-transport.js'
import { idHashesOf, idHashOf } from './message-id-index.js'
import { orderWithinMilliseconds } from './order-within-milliseconds.js'
import { isScan, ScanGate } from './scan-gate.js'

/** InfluxDB behind the store interface, in either dialect. */
export class InfluxEventStore implements EventStore {
  readonly kind: string
  readonly #backend: InfluxBackend
  readonly #scans: ScanGate
  readonly #writer: InfluxEventWriter
  /** What this process knows the index holds; undefined where the dialect cannot say (every batch is looked up). */
  readonly #knownIndex: KnownIndex | undefined
  #prepared: Promise<void> | undefined
  /** Writes one at a time (the slots of one millisecond are chosen from what is stored). */
  #writing: Promise<unknown> = Promise.resolve()
  /**
   * What the ingests not finished yet claim, with how many of them claim each: their message_ids,
   * and each ID hash and millisecond (the index points they may write, and through them the
   * primary slots they may take, which decide the hash).
   */
  readonly #pending = new Map<string, number>()
  /** Writes InfluxDB failed (unreachable, unanswered in time) since start. */
  #failedWrites = 0

  constructor (backend: InfluxBackend, maxScans: number, measurement: string, log: StoreLog) {
    this.#backend = backend
    this.#scans = new ScanGate(maxScans)
    this.kind = `influxdb (${backend.dialect})`
    this.#writer = new InfluxEventWriter(backend, measurement)
    const source = backend.knownEventsSource
    this.#knownIndex = source === undefined ? undefined : new KnownIndex(source, this.#writer.writerId, log)
  }

  /**
   * As `npm run ingest` writes (InfluxEventWriter); resolves once InfluxDB acknowledged every
   * point. Writes go one at a time, but a batch's index lookup runs while the batches before it
   * are written, unless it claims what one of them claims (a message_id, or an ID hash in a
   * millisecond): then it is looked up after they are stored, so that it sees them. Only the
   * events the index may hold are looked up (KnownIndex): with no other writer, none of a batch
   * of new events.
   */
  writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    const claims = new Set<string>()
    for (const { event: { message, epochMs } } of events) {
      claims.add('id ' + message.message_id)
      claims.add('index ' + idHashOf(message.message_id) + '@' + epochMs)
    }
    let overlaps = false
    for (const claim of claims) overlaps ||= this.#pending.has(claim)
    for (const claim of claims) this.#pending.set(claim, (this.#pending.get(claim) ?? 0) + 1)
    const prepared = this.#prepare()
    const early = overlaps ? undefined : prepared.then(() => this.#lookUp(events))
    early?.catch(() => {})
    const failedBefore = this.#failedWrites
    const written = this.#writing.then(async () => {
      // InfluxDB failed a write while this one waited behind it: this one fails at once, rather
      // than wait a timeout of its own in turn (ten ingests queued behind a stall answered after
      // ten INFLUX_TIMEOUT_MS). Its client is told to come back, as the first one was.
      if (this.#failedWrites !== failedBefore) throw unavailable('InfluxDB failed the write queued before this one; this one was not tried')
      await prepared
      try {
        return await this.#writer.writeLookedUp(events, await (early ?? this.#lookUp(events)))
      } catch (error) {
        if (error instanceof StoreUnavailableError) this.#failedWrites++
        throw error
      }
    })
    this.#writing = written.catch(() => {})
    return written.finally(() => {
      for (const claim of claims) {
        const holders = this.#pending.get(claim)! - 1
        if (holders === 0) this.#pending.delete(claim)
        else this.#pending.set(claim, holders)
      }
    })
  }

  async #lookUp (events: readonly IngestEvent[]): Promise<IndexAnswer> {
    if (this.#knownIndex === undefined) return await this.#writer.lookUp(events.map(({ event }) => event.message.message_id))
    const { maybe, stampsBefore } = await this.#knownIndex.toLookUp(events)
    return { ...await this.#writer.lookUp(maybe.map(({ event }) => event.message.message_id)), stampsBefore }
  }

  /** CREATE DATABASE once (retried on the next write when it failed). */
  #prepare (): Promise<void> {
    this.#prepared ??= this.#writer.prepareForWrites().catch((error: unknown) => {
      this.#prepared = undefined
      throw error
    })
    return this.#prepared
  }

  queryEvents (query: EventQuery): AsyncIterable<EventBatch> {
    // message_ids: the index's few series of those IDs' hashes, not every point of the window.
    if (query.messageIds !== undefined) return orderWithinMilliseconds(this.#backend.indexedEvents(idHashesOf(query.messageIds), query.startMs, query.endMs))
    const rows = isScan(query)
      ? this.#scans.pass(() => this.#backend.queryEvents(query))
      : this.#backend.queryEvents(query)
    return orderWithinMilliseconds(rows)
  }

  async health (): Promise<StoreHealth> {
    try {
      await this.#backend.ping()
      return { ready: true }
    } catch (error) {
      return { ready: false, reason: (error as Error).message }
    }
  }

  async close (): Promise<void> {
    await this.#backend.close()
  }
}
