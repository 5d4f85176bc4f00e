import type { IngestEvent } from '../event-writer.js'
import type { StoreLog } from '../store-descriptor.js'
import { idHash32, slotOf } from './event-point.js'
import type { KnownEventsSource } from './influx-backend.js'
import { otherWriterSince, type WriterStamps } from './writer-stamps.js'

/**
 * A set of 32-bit fingerprints in one open-addressed table (4 bytes a slot, at most half full):
 * about 8-16 bytes per fingerprint, where a JavaScript Set of numbers takes 30-60 and tasks the
 * garbage collector with every entry. It only ever answers "maybe" or "certainly not": two keys
 * with one fingerprint are one entry.
 */
export class FingerprintSet {
  #table = new Uint32Array(1024)
  #count = 0

  get size (): number {
    return this.#count
  }

  /** Bytes held by the table. */
  get bytes (): number {
    return this.#table.byteLength
  }

  add (fingerprint: number): void {
    if ((this.#count + 1) * 2 > this.#table.length) this.#grow()
    if (this.#insert(this.#table, nonZero(fingerprint))) this.#count++
  }

  has (fingerprint: number): boolean {
    const table = this.#table
    const mask = table.length - 1
    const wanted = nonZero(fingerprint)
    for (let at = spread(wanted) & mask; ; at = (at + 1) & mask) {
      const held = table[at]!
      if (held === wanted) return true
      if (held === 0) return false
    }
  }

  /** Whether it was new. */
  #insert (table: Uint32Array, fingerprint: number): boolean {
    const mask = table.length - 1
    for (let at = spread(fingerprint) & mask; ; at = (at + 1) & mask) {
      const held = table[at]!
      if (held === fingerprint) return false
      if (held === 0) {
        table[at] = fingerprint
        return true
      }
    }
  }

  #grow (): void {
    const larger = new Uint32Array(this.#table.length * 2)
    for (const fingerprint of this.#table) if (fingerprint !== 0) this.#insert(larger, fingerprint)
    this.#table = larger
  }
}

/** 0 marks an empty place. */
function nonZero (fingerprint: number): number {
  return fingerprint === 0 ? 1 : fingerprint >>> 0
}

/** murmur3's finaliser: every bit of the input moves the low bits the table is indexed by. */
function spread (value: number): number {
  let h = value
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** A millisecond and slot as one 32-bit fingerprint. */
function slotFingerprint (epochMs: number, slot: number): number {
  const high = Math.floor(epochMs / 0x1_0000_0000)
  return spread((epochMs >>> 0) ^ spread(high ^ Math.imul(slot, 0x9e3779b1)))
}

/**
 * What the writing process knows is in the message_id index: a fingerprint of every indexed
 * event's message_id, and of every millisecond and slot an index point holds. An event whose ID
 * and primary slot are both certainly not there needs no lookup: it is new, and its slot is free
 * (InfluxEventWriter: a slot is held, in the index or in the event's series, only by an indexed
 * event of the same millisecond and slot, or by one cut before its index point, which no lookup
 * sees either). Anything else is looked up as before, so a fingerprint shared by two keys costs
 * a lookup, never an event.
 */
export class KnownEvents {
  readonly #ids = new FingerprintSet()
  readonly #slots = new FingerprintSet()

  get size (): number {
    return this.#ids.size
  }

  get bytes (): number {
    return this.#ids.bytes + this.#slots.bytes
  }

  /** An indexed event, at the slot its index point holds. */
  add (messageId: string, epochMs: number, slot: number): void {
    this.#ids.add(idHash32(messageId))
    this.#slots.add(slotFingerprint(epochMs, slot))
  }

  /** An event about to be written: its ID, and its primary slot (a slot above them is only taken after a lookup). */
  addIngested ({ event: { message, epochMs } }: IngestEvent): void {
    this.add(message.message_id, epochMs, slotOf(message.message_id))
  }

  /** Whether the index may hold this event's ID, or an event at its millisecond and primary slot. */
  mayHold ({ event: { message, epochMs } }: IngestEvent): boolean {
    return this.#ids.has(idHash32(message.message_id)) || this.#slots.has(slotFingerprint(epochMs, slotOf(message.message_id)))
  }
}

/**
 * KnownEvents kept for one writing process, and whether it may be trusted: it is filled from the
 * whole index on the first ingest (in the background: batches are looked up meanwhile) and then
 * with every event this process writes. Before each batch the writer stamps are read
 * (writer-stamps.ts): once another writer has written since the index was read, its events may
 * be missing here, and every batch is looked up from then on (until a restart).
 */
export class KnownIndex {
  readonly #source: KnownEventsSource
  readonly #writerId: string
  readonly #log: StoreLog
  readonly #known = new KnownEvents()
  #reading: Promise<void> | undefined
  #stampsBefore: WriterStamps | undefined
  #state: 'reading' | 'trusted' | 'distrusted' = 'reading'

  constructor (source: KnownEventsSource, writerId: string, log: StoreLog) {
    this.#source = source
    this.#writerId = writerId
    this.#log = log
  }

  /**
   * The events of a batch about to be written that the index may hold: those to look up; and the
   * writer stamps as they were before the lookup (what a failed write's events are judged by
   * later, InfluxEventWriter; undefined when they could not be read).
   */
  async toLookUp (events: readonly IngestEvent[]): Promise<{ maybe: readonly IngestEvent[], stampsBefore: WriterStamps | undefined }> {
    this.#reading ??= this.#read()
    if (this.#state === 'trusted') {
      const stamps = await this.#source.writerStamps()
      const trusted = this.#onlyWriter(stamps)
      const maybe = trusted ? events.filter((event) => this.#known.mayHold(event)) : events
      // Before their write: a write cut halfway leaves fingerprints of events that may not be there, which costs lookups only.
      for (const event of events) this.#known.addIngested(event)
      return { maybe, stampsBefore: stamps }
    }
    for (const event of events) this.#known.addIngested(event)
    // Every event is looked up; the stamps are read all the same, for the events of a write that
    // may fail (a failed read only leaves them unknown).
    return { maybe: events, stampsBefore: await this.#source.writerStamps().catch(() => undefined) }
  }

  async #read (): Promise<void> {
    try {
      this.#stampsBefore = await this.#source.writerStamps()
      for await (const points of this.#source.allIndexPoints()) {
        for (const { message, epochMs, slot } of points) this.#known.add(message.message_id, epochMs, slot)
      }
      if (this.#state === 'reading') this.#state = 'trusted'
      this.#log.info({ events: this.#known.size, bytes: this.#known.bytes }, 'message_id index read: new events are written without a lookup')
    } catch (error) {
      // Tried again on the next ingest; until then every batch is looked up.
      this.#reading = undefined
      this.#log.warn({ err: error }, 'cannot read the message_id index; every batch is looked up until it can')
    }
  }

  /** Whether no other writer has written since the index was read, as these stamps tell. */
  #onlyWriter (stamps: WriterStamps): boolean {
    const other = otherWriterSince(this.#stampsBefore!, stamps, this.#writerId)
    if (other === undefined) return true
    if (this.#state === 'trusted') {
      this.#state = 'distrusted'
      this.#log.warn({ writer: other }, 'another process wrote to this measurement: every batch is looked up in the message_id index from now on (until a restart)')
    }
    return false
  }
}
