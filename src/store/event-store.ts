import type { Message, MessageCategory } from '../../schemas/message.js'
import type { StoredEvent } from '../data/event-lines.js'
import type { IngestEvent, WriteOutcome } from './event-writer.js'

/** What the events endpoint asks a store, after every rule has been checked and every tag resolved. */
export interface EventQuery {
  /** The window: startMs <= date_time < endMs. */
  startMs: number
  endMs: number
  /** undefined: every entity. Otherwise events of these devices, or that happened in these spaces. */
  entities: EntitySelection | undefined
  /**
   * A scoped token's visible entities (undefined: unscoped): only events whose device or space
   * is among them. A store may ignore it; the contract (store-contract.ts) applies it.
   */
  scope?: EntitySelection | undefined
  messageIds?: ReadonlySet<string> | undefined
  category?: MessageCategory | undefined
  messageCodes?: ReadonlySet<string> | undefined
}

/** An event's device (absent for a space's own event) and space. */
export type StoredEntities = Pick<Message, 'device_id' | 'space_id'>

export interface EntitySelection {
  deviceIds: ReadonlySet<string>
  spaceIds: ReadonlySet<string>
}

/**
 * The wire JSON of a batch's events, for a store that keeps its events encoded in a list (the
 * memory store, see `encodeMessageList` in src/store/message-json.ts): the JSON of `messages[i]`
 * is `bytes` from `offsets[positions[i]]` to `offsets[positions[i] + 1]`, exactly the bytes
 * `encodeMessage(messages[i])` writes. Answers then copy bytes instead of serialising.
 */
export interface EncodedMessages {
  readonly bytes: Buffer
  readonly offsets: Uint32Array
  /** A list, or a view of a store's own index (not to be written to). */
  readonly positions: readonly number[] | Uint32Array
  /** The events' facts by number, at the same positions, for a store that keeps them. */
  readonly facts?: EventFacts | undefined
  /**
   * The same events' JSON once more, as one piece: the JSON of `messages[i]` is also `run.bytes`
   * from `run.starts[run.first + i]` to `run.starts[run.first + i + 1] - 1`, and one comma
   * stands between two events. A store that keeps an entity's events together (the memory
   * store, see EntityRuns) says so, and a run of events is written in one copy. Dropped by
   * whatever changes the batch's events (store-contract.ts's copy of a batch).
   */
  readonly run?: { readonly bytes: Buffer, readonly starts: Uint32Array, readonly first: number } | undefined
}

/**
 * What the store contract checks of each event, as numbers a store keeps beside its events (the
 * memory store): read from a few typed arrays instead of each message object and its strings,
 * which lie scattered over the heap (store-contract.ts). A store that hands them over vouches
 * that they say what its messages say. Indexed by `EncodedMessages.positions`.
 */
export interface EventFacts {
  /** date_time, in milliseconds since the epoch. */
  readonly epochMs: Float64Array
  /** entityNumber(device_id) (src/data/entity-numbers.ts), or -1 for a space's own event. */
  readonly deviceNumbers: Int32Array
  /** entityNumber(space_id), or -1 for an event without one. */
  readonly spaceNumbers: Int32Array
}

/** Some events of an answer, in answer order. */
export interface EventBatch {
  readonly messages: readonly Message[]
  /** Present when the store hands over its events' JSON too (parallel to messages). */
  readonly encoded?: EncodedMessages | undefined
}

/** How many events a store puts in one batch: large answers stream batch by batch. */
export const EVENT_BATCH_SIZE = 1000

export interface StoreHealth {
  ready: boolean
  /** Why it is not ready, for operators. */
  reason?: string
}

/**
 * The one interface between the HTTP layer and a store. A store answers what it can push down:
 * events of the query's window and filters, in date_time then message_id order, in batches as
 * they become available. Whatever it yields passes through `keepStoreContract`
 * (store-contract.ts), which holds every store to the rules of an answer: a store that yields
 * an event of an unknown entity, one outside the query or a repeat has it dropped there, and one
 * that breaks the order fails the answer.
 */
/**
 * A query's batches: asynchronous from a store that reads them from elsewhere (InfluxDB), or
 * synchronous from one that holds them in the process (the memory store), so that a small answer
 * is rendered without a promise or an event-loop turn per batch.
 */
export type EventBatches = AsyncIterable<EventBatch> | Iterable<EventBatch>

/** Whether the batches are there to take synchronously. */
export function isSynchronous (batches: EventBatches): batches is Iterable<EventBatch> {
  return Symbol.iterator in batches
}

export interface EventStore {
  readonly kind: string
  queryEvents (query: EventQuery): EventBatches
  health (): Promise<StoreHealth>
  /**
   * Stores events an ingest accepted, as `npm run ingest` would, each call judged after the calls
   * made before it (calls made in the same turn may share one durable write): an ID
   * already stored as this very event is unchanged, as another event refused. Resolves once
   * every event it stored is durable and served by queryEvents; StoreUnavailableError when the
   * store cannot take them (no event is then half-written).
   */
  writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome>
  /**
   * For a store each process keeps its own copy of (the memory store): events another process
   * serving the same store has written, to serve from now on. Stores every process reads
   * directly (InfluxDB) leave it out.
   */
  takeWrittenElsewhere? (events: readonly StoredEvent[]): void
  /**
   * For the same stores: takes the events other processes wrote after this one loaded the store
   * (before it could hear of them), once each. Resolves with how many it took.
   */
  takeAppendedSinceLoad? (): Promise<number>
  /**
   * For the same stores: the events at the end of the shared store that no process announced
   * (a cluster's worker that died between its write and its announcement: it held the write
   * lock, so nothing was written after them), taken to be served from now on and returned, in
   * the order they were written, to be announced. Called with the write lock held; it goes back
   * from the end to the first event it has.
   */
  takeUnannounced? (): Promise<readonly StoredEvent[]>
  /**
   * The device and space of every stored event, for a store that holds them in the process (the
   * memory store), so start-up can tell how many the registry would not serve
   * (unknown-entity-events.ts). Each item may be the same object, changed: valid until the next.
   * Stores that would have to read everything from elsewhere (InfluxDB) leave it out.
   */
  storedEntities? (): Iterable<StoredEntities>
  close (): Promise<void>
}

/** The store cannot answer now (unreachable, too slow, failing); the provider answers 503. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}

/**
 * The store refused a query as malformed: whatever the client asked, a query the provider built
 * must be one its store accepts, so this is the provider's defect (500 internal_error, logged as
 * an error), never the store's unavailability.
 */
export class StoreQueryError extends Error {
  override name = 'StoreQueryError'
}
