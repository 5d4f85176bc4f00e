import type { Message } from '../../../schemas/message.js'
import type { EventQuery } from '../event-store.js'
import type { StoredPointValues } from './event-point.js'
import type { WriterStamps } from './writer-stamps.js'

/** One event as a dialect reads it, in time order of milliseconds (order within one is free). */
export interface TimedMessage {
  message: Message
  epochMs: number
}

/** A point already in the store, as the writer needs it to place new ones. */
export interface ExistingPoint {
  values: StoredPointValues
  epochMs: number
  slot: number
}

/** An event of the message_id index as the writer needs it: where its point is, to the slot. */
export interface IndexedPoint {
  message: Message
  epochMs: number
  slot: number
}

/** What a writing process reads to know the message_id index itself (KnownEvents). */
export interface KnownEventsSource {
  /** Each writer's latest stamp (writer-stamps.ts). */
  writerStamps (): Promise<WriterStamps>
  /** Every index point across all time, in no particular order. */
  allIndexPoints (): AsyncIterable<IndexedPoint[]>
}

/**
 * What one query dialect (InfluxQL or Flux) does for InfluxEventStore. Failures to reach or
 * hear from InfluxDB in time are StoreUnavailableError.
 */
export interface InfluxBackend {
  readonly dialect: 'influxql' | 'flux'
  /**
   * What the ingest reads to skip the lookups of events the index certainly does not hold;
   * undefined where the dialect has not been verified for it (Flux): every batch is looked up.
   */
  readonly knownEventsSource: KnownEventsSource | undefined
  /** Events in the window with the query's filters pushed down, ordered by time, streamed in batches. */
  queryEvents (query: EventQuery): AsyncIterable<TimedMessage[]>
  /**
   * The events of the message_id index (message-id-index.ts) whose ID hashes to one of
   * `idHashes`, with startMs <= time < endMs, in time order: every event of those IDs, and others
   * sharing their hashes.
   */
  indexedEvents (idHashes: readonly string[], startMs: number, endMs: number): AsyncIterable<TimedMessage[]>
  /**
   * The writer's lookup: every index point whose ID hashes to one of `idHashes`, across all time,
   * with its exact slot, in no particular order.
   */
  indexPoints (idHashes: readonly string[]): AsyncIterable<IndexedPoint[]>
  /** Every point with startMs <= time < endMs, with its exact sub-millisecond slot. */
  pointsBetween (startMs: number, endMs: number): AsyncIterable<ExistingPoint[]>
  /**
   * Every point of each of these milliseconds, as pointsBetween(ms, ms + 1) for each, in few
   * requests; where a dialect leaves it out, the writer asks pointsBetween for each in turn.
   */
  pointsAt? (milliseconds: readonly number[]): AsyncIterable<ExistingPoint[]>
  /** Writes line-protocol lines; throws with InfluxDB's reason when any is refused. */
  write (lines: readonly string[]): Promise<void>
  /** Resolves when InfluxDB answers its ping. */
  ping (): Promise<void>
  /** Creates the database or checks the bucket, where the dialect can (ingest only). */
  prepareForWrites (): Promise<void>
  close (): Promise<void>
}
