import type { IngestEvent, WriteOutcome } from '../store/event-writer.js'
import { takeWriteGroup } from '../store/write-groups.js'

/** An ingest waiting for its group's write. */
export interface PendingIngest {
  events: readonly IngestEvent[]
  resolve: (outcome: WriteOutcome) => void
  reject: (error: unknown) => void
}

/**
 * The most events of the ingests that take the write lock together (whole ingests): their events
 * are published in one piece, each copied into the stream log in that turn. Four ingests of
 * 60,000 events waiting together were published in 81 ms (the log's copy 74 ms; a review's
 * scratch run, 2026-11-28); this many, in about 30 ms.
 */
export const LIVE_GROUP_EVENTS_MAX = 65_536

export interface IngestQueueOptions {
  /** Writes a group and publishes its events; resolves with the error that failed a write for the store's sake (a 503), if any. */
  writeGroup: (group: readonly PendingIngest[]) => Promise<Error | undefined>
  /** Runs a write holding the provider's write lock (LiveBus.exclusive). */
  exclusive: <T>(write: () => Promise<T>) => Promise<T>
  /** A defect of the queue's own (its writes' failures go to their ingests). */
  onFailure: (error: unknown) => void
  maxEvents?: number
}

/**
 * Ingests waiting for the write lock, in arrival order. They take it together, as one group of
 * up to LIVE_GROUP_EVENTS_MAX events (whole ingests; a larger one goes alone): the store gets
 * each of them in the same turn (the memory store then makes them durable with one append and
 * one flush), and their events are published in that order. One lock and one flush per batch
 * left the provider waiting on the disk while batches queued behind it.
 */
export class IngestQueue {
  readonly #options: IngestQueueOptions
  #waiting: PendingIngest[] = []
  #draining: Promise<void> | undefined

  constructor (options: IngestQueueOptions) {
    this.#options = options
  }

  /** Writes the events with the next group; resolves with their outcome once written and published. */
  ingest (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ events, resolve, reject })
      this.#draining ??= this.#drain().catch(this.#options.onFailure)
    })
  }

  async #drain (): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const { group, rest } = takeWriteGroup(this.#waiting, this.#options.maxEvents ?? LIVE_GROUP_EVENTS_MAX)
        this.#waiting = rest
        try {
          const unavailable = await this.#options.exclusive(() => this.#options.writeGroup(group))
          // The store failed while these waited: they fail at once, with the same answer, rather
          // than each group behind a stalled store wait a timeout of its own in turn.
          if (unavailable !== undefined) {
            const behind = this.#waiting
            this.#waiting = []
            for (const pending of behind) pending.reject(unavailable)
          }
        } catch (error) {
          // The lock itself failed (a cluster's primary gone): no write was made.
          for (const pending of group) pending.reject(error)
        }
      }
    } finally {
      this.#draining = undefined
    }
  }
}
