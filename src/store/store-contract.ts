import type { Message } from '../../schemas/message.js'
import { formatEventTime } from '../time/rfc3339.js'
import { compareMessageIds } from './event-order.js'
import type { EncodedMessages, EventBatch, EventQuery, EventStore } from './event-store.js'

/** Which entities may be served: the registry (src/registry), as this layer needs it. */
export interface KnownEntities {
  knowsEntityOf (event: Pick<Message, 'device_id' | 'space_id'>): boolean
}

/** A store yielded events out of order: a defect of that store, answered as 500 internal_error. */
export class StoreContractError extends Error {
  override name = 'StoreContractError'
}

/**
 * Every answer of every store passes through here, so the rules of an answer hold whatever a store
 * pushes down, and a new store's author cannot forget one:
 *
 * 1. A query that cannot match (an empty window, no entity selected, an empty list) is not asked
 *    of the store at all.
 * 2. Only events of entities the registry knows are served (a store may hold others: files and
 *    InfluxDB are not rewritten when the registry changes).
 * 3. Only events that answer the query: its window, its entities and its exclusive filter.
 * 4. Order: date_time, then message_id. A store yields its events in that order (InfluxDB sorts
 *    each millisecond with `orderWithinMilliseconds`); an event earlier than the one before it
 *    fails the answer (StoreContractError), since nothing here could put it back in its place.
 * 5. One event per message_id and date_time: a repeat is dropped (the writers keep one event per
 *    message_id across time).
 *
 * A batch that breaks no rule is passed on as it is; otherwise a copy without the dropped events.
 */
export function keepStoreContract (store: EventStore, query: EventQuery, known: KnownEntities): AsyncIterable<EventBatch> {
  if (matchesNothing(query)) return noBatches()
  return checkedBatches(store.queryEvents(query), query, known)
}

/** Rule 1: an empty window, or a selection or list with nothing in it. */
export function matchesNothing (query: EventQuery): boolean {
  return query.startMs >= query.endMs ||
    (query.entities !== undefined && query.entities.deviceIds.size === 0 && query.entities.spaceIds.size === 0) ||
    query.messageIds?.size === 0 || query.messageCodes?.size === 0
}

/** Rule 3 without the window: whether one event answers the query's entities and exclusive filter. */
export function matchesFilters (query: EventQuery, message: Message): boolean {
  const { entities, messageIds, category, messageCodes } = query
  if (entities !== undefined &&
    !(message.device_id !== undefined && entities.deviceIds.has(message.device_id)) &&
    !(message.space_id !== undefined && entities.spaceIds.has(message.space_id))) return false
  if (messageIds !== undefined && !messageIds.has(message.message_id)) return false
  if (category !== undefined && message.message_category !== category) return false
  if (messageCodes !== undefined && !messageCodes.has(message.message_code)) return false
  return true
}

async function * noBatches (): AsyncGenerator<EventBatch> {}

async function * checkedBatches (batches: AsyncIterable<EventBatch>, query: EventQuery, known: KnownEntities): AsyncGenerator<EventBatch> {
  // Wire date_times are fixed-width UTC text, so the window is checked on the text.
  const start = formatEventTime(query.startMs)
  const end = formatEventTime(query.endMs)
  let lastTime = ''
  let lastId = ''
  for await (const batch of batches) {
    const { messages, encoded } = batch
    let kept: BatchCopy | undefined
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!
      const time = message.date_time
      const order = time === lastTime ? compareMessageIds(message.message_id, lastId) : time > lastTime ? 1 : -1
      if (order < 0) {
        throw new StoreContractError(`the store yielded ${JSON.stringify(message.message_id)} at ${time} after ${JSON.stringify(lastId)} at ${lastTime}`)
      }
      lastTime = time
      lastId = message.message_id
      const keep = order > 0 && time >= start && time < end && known.knowsEntityOf(message) && matchesFilters(query, message)
      if (keep) {
        kept?.add(messages, encoded, i)
      } else if (kept === undefined) {
        kept = new BatchCopy(messages, encoded, i)
      }
    }
    const out = kept === undefined ? batch : kept.batch()
    if (out.messages.length > 0) yield out
  }
}

/** The events of a batch that are kept, once one of them was dropped. */
class BatchCopy {
  readonly #messages: Message[] = []
  readonly #encoded: { buffers: Buffer[], starts: number[], ends: number[] } | undefined

  /** Starts with the first `count` events of the batch, all kept. */
  constructor (messages: readonly Message[], encoded: EncodedMessages | undefined, count: number) {
    this.#encoded = encoded === undefined ? undefined : { buffers: [], starts: [], ends: [] }
    for (let i = 0; i < count; i++) this.add(messages, encoded, i)
  }

  add (messages: readonly Message[], encoded: EncodedMessages | undefined, i: number): void {
    this.#messages.push(messages[i]!)
    if (encoded !== undefined && this.#encoded !== undefined) {
      this.#encoded.buffers.push(encoded.buffers[i]!)
      this.#encoded.starts.push(encoded.starts[i]!)
      this.#encoded.ends.push(encoded.ends[i]!)
    }
  }

  batch (): EventBatch {
    return { messages: this.#messages, encoded: this.#encoded }
  }
}
