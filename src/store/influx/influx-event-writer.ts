import { randomUUID } from 'node:crypto'
import type { Message } from '../../../schemas/message.js'
import { sameEvent } from '../../data/event-lines.js'
import type { EventWriter, IngestEvent, WriteOutcome } from '../event-writer.js'
import { PRIMARY_SLOTS, SLOTS_PER_MS, idHash32, messageOf, seriesKeyOf, slotOf, toLineProtocol } from './event-point.js'
import type { ExistingPoint, InfluxBackend } from './influx-backend.js'
import { idHashOf, idHashesOf, toIndexLine } from './message-id-index.js'
import { otherWriterSince, writerStampLine, type WriterStamps } from './writer-stamps.js'

const WRITE_BATCH = 5000

/**
 * At most this many events of failed writes are remembered as maybe stored (the oldest are
 * forgotten first): about 200 bytes each, and only an outage of InfluxDB fills them.
 */
export const MAX_UNCERTAIN_EVENTS = 100_000

/**
 * At most this many bytes of line protocol per write: influxd refuses a body over its
 * `max-body-size` (25 MB by default) with 413, and long identifiers make 5,000 lines pass that
 * (each escaped again inside its index point's JSON).
 */
const WRITE_MAX_BYTES = 8 * 1024 * 1024

/** The lines in runs of at most WRITE_BATCH lines and WRITE_MAX_BYTES bytes, as [from, to) pairs. */
export function writeRuns (lines: readonly string[]): Array<[number, number]> {
  const runs: Array<[number, number]> = []
  let from = 0
  let bytes = 0
  for (let i = 0; i < lines.length; i++) {
    const size = Buffer.byteLength(lines[i]!) + 1
    if (i > from && (i - from === WRITE_BATCH || bytes + size > WRITE_MAX_BYTES)) {
      runs.push([from, i])
      from = i
      bytes = 0
    }
    bytes += size
  }
  if (from < lines.length) runs.push([from, lines.length])
  return runs
}

/** A point's place: its series, millisecond and slot. */
export function pointKeyOf (message: Message, epochMs: number, slot: number): string {
  return `${seriesKeyOf(message)}@${epochMs}#${slot}`
}

/**
 * An index point's place: its ID hash, millisecond and slot (the event point's). Two events of
 * different series can share a millisecond and a slot, so they share an index point unless the
 * writer keeps this free too.
 */
export function indexKeyOf (messageId: string, epochMs: number, slot: number): string {
  return `index ${idHashOf(messageId)}@${epochMs}#${slot}`
}

/** What the message_id index holds for a batch's ID hashes (InfluxEventWriter.lookUp). */
export interface IndexAnswer {
  /** The indexed events by ID. */
  byId: ReadonlyMap<string, Message>
  /** The ID at each of their event points (pointKeyOf) and index points (indexKeyOf). */
  held: ReadonlyMap<string, string>
  /**
   * The writer stamps read before the lookup (KnownIndex): any other writer that had stored one of
   * the batch's events by then, the lookup found; undefined where they are not read.
   */
  stampsBefore?: WriterStamps | undefined
}

/** An event of a write that failed unanswered (InfluxEventWriter's #uncertain). */
interface UncertainEvent {
  message: Message
  epochMs: number
  /** The slot its point was sent to. */
  slot: number
  /** IndexAnswer.stampsBefore of its batch. */
  stampsBefore: WriterStamps | undefined
}

/** The ingest's way into InfluxDB, in either dialect. */
export class InfluxEventWriter implements EventWriter {
  readonly #backend: InfluxBackend
  readonly #measurement: string
  /** This process's name in the writer stamps (writer-stamps.ts). */
  readonly writerId = randomUUID()
  #requests = 0
  /**
   * The events of writes that failed with no answer saying whether InfluxDB applied them (a
   * timeout, a connection cut, one of the two writes done), by message_id: maybe stored, maybe
   * without their index points. An event of a later batch with one of these IDs is judged
   * against what InfluxDB holds at the uncertain event's millisecond, not against the index
   * alone, and the uncertain event found stored counts as written (and is pushed) when it is
   * posted again, no answer having said it was stored, if no other writer (which may have
   * written and pushed it meanwhile) has written since its batch was looked up. Kept by this
   * process only.
   */
  readonly #uncertain = new Map<string, UncertainEvent>()
  /** The uncertain events' IDs by millisecond: their points and index points are held from new events. */
  readonly #uncertainAt = new Map<number, Set<string>>()

  constructor (backend: InfluxBackend, measurement: string) {
    this.#backend = backend
    this.#measurement = measurement
  }

  async close (): Promise<void> {
    await this.#backend.close()
  }

  async prepareForWrites (): Promise<void> {
    await this.#backend.prepareForWrites()
  }

  /**
   * Writes events so that none overwrites another and no message_id names two events:
   *
   * 1. Every ID of the batch is looked up in the message_id index across all time: one stored as
   *    this very event is unchanged; one stored as another event (other fields, or another time,
   *    even a millisecond apart) is refused.
   * 2. Every other event takes its primary slot (event-point.ts), unless an event of the index
   *    answer, or of this batch, holds that slot in its series, or holds the index point it
   *    would write (the same ID hash, millisecond and slot, in any series): the lookup of step 1
   *    returned every indexed event that could, since a slot decides the index hash. Such an
   *    event reads its millisecond's points and takes a slot above the primary ones where both
   *    are free, or, finding itself there without its index point (a write cut between the two),
   *    gets its index point and counts as written, since no answer said it was stored. An event
   *    stored at its primary slot without its index point is simply written again: the same point.
   *
   * Event points are written before their index points: a write cut in between leaves events
   * that the next ingest of them writes again in place, never an index point without its event.
   * Until then such an event is invisible to step 2, and a new event wanting its slot takes its
   * place (the event was answered 503; posted again, it is stored apart).
   * Step 2 needs no read of the batch's window, whose cost grows with every series of the
   * measurement (a second of 5,000 devices' events: 18 → 50 ms of influxd's CPU as 100,000 events
   * became 400,000).
   */
  async writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    return await this.writeLookedUp(events, await this.lookUp(events.map(({ event }) => event.message.message_id)))
  }

  /** Step 1 alone: what the index holds for these IDs' hashes (a caller may look up while another batch is written). */
  async lookUp (messageIds: readonly string[]): Promise<IndexAnswer> {
    const byId = new Map<string, Message>()
    const held = new Map<string, string>()
    for await (const points of this.#backend.indexPoints(idHashesOf(messageIds))) {
      for (const { message, epochMs, slot } of points) {
        byId.set(message.message_id, message)
        held.set(pointKeyOf(message, epochMs, slot), message.message_id)
        held.set(indexKeyOf(message.message_id, epochMs, slot), message.message_id)
      }
    }
    return { byId, held }
  }

  /**
   * Steps 1 (with the index's answer for every ID of the batch, looked up after every write that
   * could take one of the batch's primary slots: InfluxEventStore; or only for those IDs the
   * index may hold, where the caller knows the index: known-events.ts) and 2.
   */
  async writeLookedUp (events: readonly IngestEvent[], lookedUp: IndexAnswer): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { written: 0, unchanged: 0, refused: [], stored: [] }
    const indexed = new Map(lookedUp.byId)
    const held = new Map(lookedUp.held)
    const unindexed = this.#uncertain.size === 0 ? undefined : await this.#findUncertain(events, indexed, held)
    const fresh: IngestEvent[] = []
    const repaired: Array<{ ingest: IngestEvent, slot: number }> = []
    /** Uncertain events found indexed as the events posted: written by the write that failed. */
    const confirmed: IngestEvent[] = []
    /** The IDs of this batch's uncertain events repaired or confirmed (a line after is unchanged). */
    const settled = new Set<string>()
    for (const ingest of events) {
      const { message } = ingest.event
      const id = message.message_id
      // Stored by a write that failed, without its index point (only IDs the index lacks are sought).
      const found = unindexed?.get(id)
      const known = found?.message ?? indexed.get(id)
      if (known === undefined) {
        fresh.push(ingest)
        // A later line of this batch with the same ID is judged against this one.
        indexed.set(id, message)
      } else if (!sameEvent(known, message)) {
        outcome.refused.push({ line: ingest.line, reason: `message_id ${JSON.stringify(id)} is already stored for a different event` })
      } else if (settled.has(id)) {
        outcome.unchanged++
      } else if (found !== undefined) {
        const indexKey = indexKeyOf(id, found.epochMs, found.slot)
        const indexHolder = held.get(indexKey)
        if (indexHolder !== undefined && indexHolder !== id) {
          outcome.refused.push({ line: ingest.line, reason: `message_id ${JSON.stringify(id)} is stored without its index entry, where another event's entry now is; it cannot be indexed` })
          continue
        }
        held.set(indexKey, id)
        repaired.push({ ingest, slot: found.slot })
        settled.add(id)
      } else if (this.#uncertain.has(id)) {
        // Confirmed below, when no other writer may have written (and pushed) it meanwhile.
        confirmed.push(ingest)
        settled.add(id)
      } else {
        outcome.unchanged++
      }
    }
    if (confirmed.length > 0) outcome.unchanged += await this.#unconfirmable(confirmed)
    if (this.#uncertainAt.size > 0) this.#holdUncertain(fresh, held)
    const placed: Array<{ ingest: IngestEvent, slot: number }> = []
    const displaced: IngestEvent[] = []
    for (const ingest of fresh.sort((a, b) => a.event.epochMs - b.event.epochMs)) {
      const { message, epochMs } = ingest.event
      const slot = slotOf(message.message_id)
      const key = pointKeyOf(message, epochMs, slot)
      const indexKey = indexKeyOf(message.message_id, epochMs, slot)
      if (held.has(key) || held.has(indexKey)) {
        displaced.push(ingest)
        continue
      }
      held.set(key, message.message_id)
      held.set(indexKey, message.message_id)
      placed.push({ ingest, slot })
    }
    if (displaced.length > 0) await this.#placeDisplaced(displaced, held, placed, repaired, outcome)
    const eventLines: string[] = []
    const indexLines: string[] = []
    for (const { ingest: { event: { message, epochMs } }, slot } of placed) {
      eventLines.push(toLineProtocol(this.#measurement, message, epochMs, slot))
      indexLines.push(toIndexLine(this.#measurement, message, epochMs, slot))
    }
    for (const { ingest: { event: { message, epochMs } }, slot } of repaired) {
      indexLines.push(toIndexLine(this.#measurement, message, epochMs, slot))
    }
    /** The placed events whose points were sent (the runs written, and the one being written). */
    let sent = 0
    try {
      for (const [from, to] of writeRuns(eventLines)) {
        sent = to
        await this.#write(eventLines.slice(from, to))
        outcome.written += to - from
        for (const { ingest } of placed.slice(from, to)) outcome.stored.push(ingest)
      }
      for (const [from, to] of writeRuns(indexLines)) await this.#write(indexLines.slice(from, to))
    } catch (error) {
      // Whatever the failure, a write may have been applied without its answer arriving; the
      // runs after it were never sent.
      for (const { ingest, slot } of [...placed.slice(0, sent), ...repaired]) this.#rememberUncertain(ingest, slot, lookedUp.stampsBefore)
      throw error
    }
    outcome.written += repaired.length + confirmed.length
    for (const { ingest } of [...placed, ...repaired]) this.#forget(ingest.event.message.message_id)
    for (const ingest of confirmed) this.#forget(ingest.event.message.message_id)
    outcome.stored.push(...repaired.map(({ ingest }) => ingest), ...confirmed)
    // Written in time order (and placed apart, or repaired, after); they go out live in the order
    // they were accepted: their lines'.
    const stored = new Set(outcome.stored)
    outcome.stored = events.filter((ingest) => stored.has(ingest))
    return outcome
  }

  #rememberUncertain ({ event: { message, epochMs } }: IngestEvent, slot: number, stampsBefore: WriterStamps | undefined): void {
    const id = message.message_id
    this.#forget(id)
    this.#uncertain.set(id, { message, epochMs, slot, stampsBefore })
    const at = this.#uncertainAt.get(epochMs)
    if (at === undefined) this.#uncertainAt.set(epochMs, new Set([id]))
    else at.add(id)
    if (this.#uncertain.size > MAX_UNCERTAIN_EVENTS) this.#forget(this.#uncertain.keys().next().value!)
  }

  #forget (id: string): void {
    const uncertain = this.#uncertain.get(id)
    if (uncertain === undefined) return
    this.#uncertain.delete(id)
    const at = this.#uncertainAt.get(uncertain.epochMs)!
    at.delete(id)
    if (at.size === 0) this.#uncertainAt.delete(uncertain.epochMs)
  }

  /**
   * The points and index points of the uncertain events of these events' milliseconds, as held:
   * one stored without its index point (a write cut between the two) would otherwise lose its
   * index point's place to a new event of its slot, in any series, and could never be indexed.
   */
  #holdUncertain (fresh: readonly IngestEvent[], held: Map<string, string>): void {
    for (const { event: { epochMs } } of fresh) {
      const ids = this.#uncertainAt.get(epochMs)
      if (ids === undefined) continue
      for (const id of ids) {
        const { message, slot } = this.#uncertain.get(id)!
        held.set(pointKeyOf(message, epochMs, slot), id)
        held.set(indexKeyOf(id, epochMs, slot), id)
      }
    }
  }

  /**
   * Takes out of `confirmed` (uncertain events found indexed as posted) those another writer may
   * have stored and pushed since their failed batch was looked up: its stamps changed, or they
   * could not be read (then, or now). They count as unchanged (and are not
   * pushed); they are certain now either way. Returns how many were taken out.
   */
  async #unconfirmable (confirmed: IngestEvent[]): Promise<number> {
    const source = this.#backend.knownEventsSource
    const stampsNow = source === undefined ? undefined : await source.writerStamps()
    const kept = confirmed.filter(({ event: { message } }) => {
      const before = this.#uncertain.get(message.message_id)?.stampsBefore
      const sole = before !== undefined && stampsNow !== undefined && otherWriterSince(before, stampsNow, this.writerId) === undefined
      if (!sole) this.#forget(message.message_id)
      return sole
    })
    const taken = confirmed.length - kept.length
    confirmed.splice(0, confirmed.length, ...kept)
    return taken
  }

  /**
   * Where InfluxDB holds the batch's uncertain events that the index does not (a write cut before
   * their index points): their milliseconds' points are read, and each found is returned with
   * its slot, its point marked as held. One found nowhere was never stored: it is forgotten, and
   * its ID is free (a write InfluxDB applies after this read is beyond what can be known).
   */
  async #findUncertain (events: readonly IngestEvent[], indexed: ReadonlyMap<string, Message>, held: Map<string, string>): Promise<Map<string, { message: Message, epochMs: number, slot: number }>> {
    const found = new Map<string, { message: Message, epochMs: number, slot: number }>()
    const sought = new Set<string>()
    const milliseconds = new Set<number>()
    for (const { event: { message } } of events) {
      const uncertain = this.#uncertain.get(message.message_id)
      if (uncertain === undefined || indexed.has(message.message_id)) continue
      sought.add(message.message_id)
      milliseconds.add(uncertain.epochMs)
    }
    for await (const points of this.#pointsAt([...milliseconds])) {
      for (const point of points) {
        const message = messageOf(point.values, point.epochMs)
        // Every point read is held: one stored without its index point is not written over.
        held.set(pointKeyOf(message, point.epochMs, point.slot), message.message_id)
        if (sought.has(message.message_id)) found.set(message.message_id, { message, epochMs: point.epochMs, slot: point.slot })
      }
    }
    for (const id of sought) if (!found.has(id)) this.#forget(id)
    return found
  }

  /** The points of these milliseconds: in few requests where the dialect can, else one by one. */
  async * #pointsAt (milliseconds: readonly number[]): AsyncGenerator<ExistingPoint[]> {
    if (this.#backend.pointsAt !== undefined) {
      yield * this.#backend.pointsAt(milliseconds)
      return
    }
    for (const epochMs of milliseconds) yield * this.#backend.pointsBetween(epochMs, epochMs + 1)
  }

  /** Lines and this writer's stamp, in one request: whoever sees the stamp changed knows that the index may have changed. */
  async #write (lines: string[]): Promise<void> {
    lines.push(writerStampLine(this.#measurement, this.writerId, ++this.#requests, Date.now()))
    await this.#backend.write(lines)
  }

  /**
   * Events whose primary slot another ID holds, in their series or in the index (rare: two IDs of
   * one millisecond with the same 19 bits of hash). Their milliseconds' points are read; an event
   * of the batch placed in one of those milliseconds on a point the read shows taken (by an event
   * whose index point was never written) is displaced too. Then each displaced event is found
   * there without its index point (repaired, or refused when another event's index point now
   * holds its place), found as another event (refused), or given the first free slot above the
   * primary ones, from a start its hash chooses, where both its point and its index point are free.
   */
  async #placeDisplaced (displacedFirst: readonly IngestEvent[], held: Map<string, string>, placed: Array<{ ingest: IngestEvent, slot: number }>, repaired: Array<{ ingest: IngestEvent, slot: number }>, outcome: WriteOutcome): Promise<void> {
    /** message_id -> where it is stored: series@ms, and slot */
    const stored = new Map<string, { at: string, slot: number }>()
    /** The event points read: series@ms#slot -> message_id */
    const read = new Map<string, string>()
    const milliseconds = new Set(displacedFirst.map(({ event }) => event.epochMs))
    for (const epochMs of milliseconds) {
      for await (const points of this.#backend.pointsBetween(epochMs, epochMs + 1)) {
        for (const point of points) {
          const message = messageOf(point.values, point.epochMs)
          const key = pointKeyOf(message, point.epochMs, point.slot)
          read.set(key, message.message_id)
          held.set(key, message.message_id)
          stored.set(message.message_id, { at: `${seriesKeyOf(message)}@${point.epochMs}`, slot: point.slot })
        }
      }
    }
    const displaced = [...displacedFirst]
    for (let i = placed.length - 1; i >= 0; i--) {
      const { ingest, slot } = placed[i]!
      const { message, epochMs } = ingest.event
      if (!milliseconds.has(epochMs)) continue
      const holder = read.get(pointKeyOf(message, epochMs, slot))
      if (holder === undefined || holder === message.message_id) continue
      placed.splice(i, 1)
      held.delete(indexKeyOf(message.message_id, epochMs, slot))
      displaced.push(ingest)
    }
    const overflowSlots = SLOTS_PER_MS - PRIMARY_SLOTS
    for (const ingest of displaced) {
      const { message, epochMs } = ingest.event
      const id = message.message_id
      const at = `${seriesKeyOf(message)}@${epochMs}`
      const storedAt = stored.get(id)
      if (storedAt?.at === at) {
        const indexHolder = held.get(indexKeyOf(id, epochMs, storedAt.slot))
        if (indexHolder !== undefined && indexHolder !== id) {
          // Its index point would overwrite another event's: it stays as it is, unindexed.
          outcome.refused.push({ line: ingest.line, reason: `message_id ${JSON.stringify(id)} is stored without its index entry, where another event's entry now is; it cannot be indexed` })
          continue
        }
        held.set(indexKeyOf(id, epochMs, storedAt.slot), id)
        repaired.push({ ingest, slot: storedAt.slot })
        continue
      }
      if (storedAt !== undefined) {
        outcome.refused.push({ line: ingest.line, reason: `message_id ${JSON.stringify(id)} is already stored for a different event` })
        continue
      }
      const taken = (slot: number) => held.has(`${at}#${slot}`) || held.has(indexKeyOf(id, epochMs, slot))
      let offset = idHash32(id) % overflowSlots
      for (let tried = 0; taken(PRIMARY_SLOTS + offset); tried++) {
        // Every slot above the primary ones of this millisecond taken: nothing can be placed without overwriting.
        if (tried === overflowSlots) throw new Error(`no free slot for message_id ${JSON.stringify(id)} in its series at ${message.date_time}`)
        offset = (offset + 1) % overflowSlots
      }
      const slot = PRIMARY_SLOTS + offset
      held.set(`${at}#${slot}`, id)
      held.set(indexKeyOf(id, epochMs, slot), id)
      stored.set(id, { at, slot })
      placed.push({ ingest, slot })
    }
  }
}
