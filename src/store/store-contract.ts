import { Identifier } from '../../schemas/identifier.js'
import type { Message } from '../../schemas/message.js'
import { EntityNumberSet } from '../data/entity-numbers.js'
import { formatEventTime } from '../time/rfc3339.js'
import { compareMessageIds } from './event-order.js'
import { isSynchronous, type EncodedMessages, type EntitySelection, type EventBatch, type EventBatches, type EventFacts, type EventQuery, type EventStore } from './event-store.js'

/** Which entities may be served: the registry (src/registry), as this layer needs it. */
export interface KnownEntities {
  knowsEntityOf (event: Pick<Message, 'device_id' | 'space_id'>): boolean
  /** The same rule by number, for batches that carry their facts (src/data/entity-numbers.ts). */
  knownNumbers?: () => { devices: EntityNumberSet, spaces: EntityNumberSet }
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
 *    of the store at all, and message IDs or codes that no stored event can have (a control
 *    character, say: see schemas/identifier.ts) are left out of what it is asked, so no store's
 *    query language ever has to express them.
 * 2. Only events of entities the registry knows are served (a store may hold others: files and
 *    InfluxDB are not rewritten when the registry changes).
 * 3. Only events that answer the query: its window, its entities, its scope (what the token may
 *    see) and its exclusive filter.
 * 4. Order: date_time, then message_id. A store yields its events in that order (InfluxDB sorts
 *    each millisecond with `orderWithinMilliseconds`); an event earlier than the one before it
 *    fails the answer (StoreContractError), since nothing here could put it back in its place.
 * 5. One event per message_id and date_time: a repeat is dropped (the writers keep one event per
 *    message_id across time).
 *
 * A batch that breaks no rule is passed on as it is; otherwise a copy without the dropped events.
 */
export function keepStoreContract (store: EventStore, query: EventQuery, known: KnownEntities): EventBatches {
  const asked = withStorableIds(query)
  if (matchesNothing(asked)) return NO_BATCHES
  const batches = store.queryEvents(asked)
  // As the store answered: synchronously or not.
  return isSynchronous(batches) ? checkedBatchesNow(batches, asked, known) : checkedBatches(batches, asked, known)
}

const identifierPattern = new RegExp(Identifier.pattern!)

/** Whether a value could be a stored identifier at all (the data files' rule). */
export function isStorableIdentifier (value: string): boolean {
  return value.length <= Identifier.maxLength! && identifierPattern.test(value)
}

/** The query without the message IDs and codes no stored event can have. */
function withStorableIds (query: EventQuery): EventQuery {
  const messageIds = storableOnly(query.messageIds)
  const messageCodes = storableOnly(query.messageCodes)
  if (messageIds === query.messageIds && messageCodes === query.messageCodes) return query
  return { ...query, messageIds, messageCodes }
}

function storableOnly (values: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
  if (values === undefined) return undefined
  for (const value of values) {
    if (!isStorableIdentifier(value)) return new Set([...values].filter(isStorableIdentifier))
  }
  return values
}

/** Rule 1: an empty window, or a selection or list with nothing in it. */
export function matchesNothing (query: EventQuery): boolean {
  return query.startMs >= query.endMs ||
    (query.entities !== undefined && query.entities.deviceIds.size === 0 && query.entities.spaceIds.size === 0) ||
    (query.scope !== undefined && query.scope.deviceIds.size === 0 && query.scope.spaceIds.size === 0) ||
    query.messageIds?.size === 0 || query.messageCodes?.size === 0
}

/** Rule 3 without the window: whether one event answers the query's entities, scope and exclusive filter. */
export function matchesFilters (query: EventQuery, message: Message): boolean {
  const { entities, scope } = query
  if (entities !== undefined && !isOf(entities, message)) return false
  if (scope !== undefined && !isOf(scope, message)) return false
  return matchesExclusiveFilter(query, message)
}

/** Whether an event's device, or the space it happened in, is among these entities. */
function isOf (entities: EntitySelection, message: Message): boolean {
  return (message.device_id !== undefined && entities.deviceIds.has(message.device_id)) ||
    (message.space_id !== undefined && entities.spaceIds.has(message.space_id))
}

/** Whether one event answers the query's message_ids, message_category or message_codes, if any. */
export function matchesExclusiveFilter (query: EventQuery, message: Message): boolean {
  const { messageIds, category, messageCodes } = query
  if (messageIds !== undefined && !messageIds.has(message.message_id)) return false
  if (category !== undefined && message.message_category !== category) return false
  if (messageCodes !== undefined && !messageCodes.has(message.message_code)) return false
  return true
}

const NO_BATCHES: Iterable<EventBatch> = []

/**
 * The store's batches, each checked as it passes. A plain iterator, not an async generator: the
 * checks are synchronous, and a generator's own promises and resumptions were 4% of a small
 * request's CPU.
 */
function checkedBatches (batches: AsyncIterable<EventBatch>, query: EventQuery, known: KnownEntities): AsyncIterable<EventBatch> {
  return {
    [Symbol.asyncIterator]: () => {
      const source = batches[Symbol.asyncIterator]()
      const checker = new BatchChecker(query, known)
      const next = (): Promise<IteratorResult<EventBatch>> => source.next().then((result) => {
        if (result.done === true) return result
        const checked = checker.check(result.value)
        return checked.messages.length > 0 ? { done: false, value: checked } : next()
      })
      return {
        next,
        return: async (value?: unknown) => {
          await source.return?.(value)
          return { done: true, value: undefined }
        }
      }
    }
  }
}

/** The same, for a store that answers synchronously. */
function checkedBatchesNow (batches: Iterable<EventBatch>, query: EventQuery, known: KnownEntities): Iterable<EventBatch> {
  return new CheckedBatchesNow(batches, query, known)
}

/**
 * A class rather than an object literal with a computed Symbol.iterator key and closures: V8
 * built that literal through its slow path, 1.4 µs of a small request's CPU in a profile.
 */
class CheckedBatchesNow implements Iterable<EventBatch>, Iterator<EventBatch> {
  readonly #batches: Iterable<EventBatch>
  readonly #query: EventQuery
  readonly #known: KnownEntities
  #source: Iterator<EventBatch> | undefined
  #checker: BatchChecker | undefined

  constructor (batches: Iterable<EventBatch>, query: EventQuery, known: KnownEntities) {
    this.#batches = batches
    this.#query = query
    this.#known = known
  }

  /** Its own iterator the first time (an answer reads its batches once); a new one after. */
  [Symbol.iterator] (): Iterator<EventBatch> {
    if (this.#source !== undefined) return new CheckedBatchesNow(this.#batches, this.#query, this.#known)[Symbol.iterator]()
    this.#source = this.#batches[Symbol.iterator]()
    this.#checker = new BatchChecker(this.#query, this.#known)
    return this
  }

  next (): IteratorResult<EventBatch> {
    const source = this.#source!
    while (true) {
      const result = source.next()
      if (result.done === true) return result
      const checked = this.#checker!.check(result.value)
      if (checked.messages.length > 0) return { done: false, value: checked }
    }
  }

  return (value?: unknown): IteratorResult<EventBatch> {
    this.#source?.return?.(value)
    return { done: true, value: undefined }
  }
}

/** An entity selection by number: devices and spaces. */
interface NumberedSelection {
  devices: EntityNumberSet
  spaces: EntityNumberSet
}

/**
 * A selection by number. A query's own selection is made for its request and numbered once per
 * answer; keeping it in a WeakMap as well cost more than numbering it (an ephemeron entry per
 * request, which every young-generation GC then processes: 2.6 µs of a small request's 60 in a
 * profile of the small scenario).
 */
function numbered (selection: EntitySelection): NumberedSelection {
  return { devices: new EntityNumberSet(selection.deviceIds), spaces: new EntityNumberSet(selection.spaceIds) }
}

/** A scope's selection serves every request of its token: numbered once, kept while it lives. */
const numberedScopes = new WeakMap<EntitySelection, NumberedSelection>()

function numberedScope (scope: EntitySelection): NumberedSelection {
  let sets = numberedScopes.get(scope)
  if (sets === undefined) numberedScopes.set(scope, sets = numbered(scope))
  return sets
}

/** isOf, by number: the event's device, or the space it happened in, is among these entities. */
function isOfNumbered (sets: NumberedSelection, device: number, space: number): boolean {
  return (device >= 0 && sets.devices.has(device)) || (space >= 0 && sets.spaces.has(space))
}

/** A query's entities and scope by number (EventFacts' columns). */
export interface NumberedQuery {
  entities: NumberedSelection | undefined
  scope: NumberedSelection | undefined
}

export function numberedQuery ({ entities, scope }: EventQuery): NumberedQuery {
  const scopeNumbers = scope === undefined ? undefined : numberedScope(scope)
  // A token that asked for no entity is given its scope's selection as its query's.
  const entityNumbers = entities === undefined ? undefined : entities === scope ? scopeNumbers : numbered(entities)
  return { entities: entityNumbers, scope: scopeNumbers }
}

/** matchesFilters' entities and scope, by number: for a store that can tell them before reading an event (the memory store). */
export function isOfNumberedQuery ({ entities, scope }: NumberedQuery, device: number, space: number): boolean {
  return (entities === undefined || isOfNumbered(entities, device, space)) && (scope === undefined || isOfNumbered(scope, device, space))
}

/**
 * Rules 2 to 5 over one answer's batches, in order. A batch with its facts (EventFacts: the
 * memory store's) is checked by number, reading the message objects only where two events share
 * a millisecond and for the exclusive filter: the same rules on the same values, since every
 * date_time is UTC wire form to the millisecond and every entity number stands for one ID.
 */
class BatchChecker {
  readonly #query: EventQuery
  readonly #known: KnownEntities
  // Wire date_times are fixed-width UTC text, so order and window are checked on the text (for
  // batches without their facts: made when the first one comes).
  #start = ''
  #end = ''
  /** The last event checked, and its time in milliseconds (for the next batch's order). */
  #last: Message | undefined = undefined
  #lastMs = Number.NEGATIVE_INFINITY
  /** The query's entities and scope by number, made when the first batch is checked by number. */
  #numbers: NumberedQuery | undefined

  constructor (query: EventQuery, known: KnownEntities) {
    this.#query = query
    this.#known = known
  }

  /** The batch itself when it breaks no rule; otherwise a copy without the events dropped. */
  check (batch: EventBatch): EventBatch {
    const { messages, encoded } = batch
    if (messages.length === 0) return batch
    const facts = encoded?.facts
    const known = this.#known
    return facts !== undefined && known.knownNumbers !== undefined
      ? this.#checkByNumber(batch, encoded!, facts, known.knownNumbers())
      : this.#checkByText(batch)
  }

  #checkByText (batch: EventBatch): EventBatch {
    const { messages, encoded } = batch
    const count = messages.length
    const query = this.#query
    const known = this.#known
    if (this.#start === '') {
      this.#start = formatEventTime(query.startMs)
      this.#end = formatEventTime(query.endMs)
    }
    const start = this.#start
    const end = this.#end
    let lastTime = this.#last?.date_time ?? ''
    let lastId = this.#last?.message_id ?? ''
    // Order is checked event by event below, so the window needs checking only where a batch
    // could leave it: at its ends. Then each event costs one comparison and the entity checks.
    const inWindow = messages[0]!.date_time >= start && messages[count - 1]!.date_time < end
    let kept: BatchCopy | undefined
    for (let i = 0; i < count; i++) {
      const message = messages[i]!
      const time = message.date_time
      let keep: boolean
      if (time > lastTime) {
        keep = true
      } else if (time === lastTime) {
        const order = compareMessageIds(message.message_id, lastId)
        if (order < 0) throw outOfOrder(message, lastTime, lastId)
        // Rule 5: the same message_id again at the same date_time is a repeat.
        keep = order > 0
      } else {
        throw outOfOrder(message, lastTime, lastId)
      }
      lastTime = time
      lastId = message.message_id
      keep = keep && (inWindow || (time >= start && time < end)) && known.knowsEntityOf(message) && matchesFilters(query, message)
      if (keep) {
        kept?.add(messages, encoded, i)
      } else if (kept === undefined) {
        kept = new BatchCopy(messages, encoded, i)
      }
    }
    this.#last = messages[count - 1]!
    this.#lastMs = Date.parse(lastTime)
    return kept === undefined ? batch : kept.batch()
  }

  #checkByNumber (batch: EventBatch, encoded: EncodedMessages, facts: EventFacts, known: { devices: EntityNumberSet, spaces: EntityNumberSet }): EventBatch {
    const { messages } = batch
    const count = messages.length
    const query = this.#query
    const { startMs, endMs } = query
    const { entities, scope } = this.#numbers ??= numberedQuery(query)
    const exclusive = query.messageIds !== undefined || query.category !== undefined || query.messageCodes !== undefined
    const { positions } = encoded
    const { epochMs, deviceNumbers, spaceNumbers } = facts
    let last = this.#last
    let lastMs = this.#lastMs
    const inWindow = epochMs[positions[0]!]! >= startMs && epochMs[positions[count - 1]!]! < endMs
    let kept: BatchCopy | undefined
    for (let i = 0; i < count; i++) {
      const position = positions[i]!
      const ms = epochMs[position]!
      let keep: boolean
      if (ms > lastMs) {
        keep = true
      } else if (ms === lastMs) {
        const message = messages[i]!
        const order = compareMessageIds(message.message_id, last!.message_id)
        if (order < 0) throw outOfOrder(message, last!.date_time, last!.message_id)
        // Rule 5: the same message_id again at the same date_time is a repeat.
        keep = order > 0
      } else {
        throw outOfOrder(messages[i]!, last!.date_time, last!.message_id)
      }
      last = messages[i]!
      lastMs = ms
      if (keep) {
        const device = deviceNumbers[position]!
        const space = spaceNumbers[position]!
        keep = (inWindow || (ms >= startMs && ms < endMs)) &&
          (device >= 0 ? known.devices.has(device) : space >= 0 && known.spaces.has(space)) &&
          (entities === undefined || isOfNumbered(entities, device, space)) &&
          (scope === undefined || isOfNumbered(scope, device, space)) &&
          (!exclusive || matchesExclusiveFilter(query, messages[i]!))
      }
      if (keep) {
        kept?.add(messages, encoded, i)
      } else if (kept === undefined) {
        kept = new BatchCopy(messages, encoded, i)
      }
    }
    this.#last = last
    this.#lastMs = lastMs
    return kept === undefined ? batch : kept.batch()
  }
}

function outOfOrder (message: Message, lastTime: string, lastId: string): StoreContractError {
  return new StoreContractError(`the store yielded ${JSON.stringify(message.message_id)} at ${message.date_time} after ${JSON.stringify(lastId)} at ${lastTime}`)
}

/** The events of a batch that are kept, once one of them was dropped. */
class BatchCopy {
  readonly #messages: Message[] = []
  readonly #positions: number[] | undefined
  readonly #encoded: EncodedMessages | undefined

  /** Starts with the first `count` events of the batch, all kept. */
  constructor (messages: readonly Message[], encoded: EncodedMessages | undefined, count: number) {
    this.#encoded = encoded
    this.#positions = encoded === undefined ? undefined : []
    for (let i = 0; i < count; i++) this.add(messages, encoded, i)
  }

  add (messages: readonly Message[], encoded: EncodedMessages | undefined, i: number): void {
    this.#messages.push(messages[i]!)
    if (encoded !== undefined) this.#positions!.push(encoded.positions[i]!)
  }

  batch (): EventBatch {
    const encoded = this.#encoded
    return { messages: this.#messages, encoded: encoded === undefined ? undefined : { bytes: encoded.bytes, offsets: encoded.offsets, positions: this.#positions!, facts: encoded.facts } }
  }
}
