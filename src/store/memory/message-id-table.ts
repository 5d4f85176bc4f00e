import { IDENTIFIER_SEED } from '../../data/identifier-seed.js'
import { PagesInTurn, type PagesAsked } from './prefaulted-buffers.js'

/**
 * A message_id index of the memory store: message_id to a number (a position in a segment, or an
 * entry of the ingested events), for millions of IDs.
 *
 * Why not a Map: a Map<string, number> of a million IDs was the largest single cost of an ingest
 * (BENCHMARKS.md, "What profiling found"): every new ID is looked up in the loaded segment's Map
 * and then added to the Map of ingested IDs, and each of those reads several scattered objects
 * (bucket, entry, the key string's contents) that are not in the CPU cache. Here a lookup of an
 * absent ID reads one slot of a typed array (the 32-bit hashes, outside the V8 heap), and only a
 * matching hash reads the stored ID itself, through the owner's own array (`idOf`): the table
 * keeps no strings of its own, so it adds 8 bytes a slot and nothing for the collector to trace.
 *
 * Open addressing with linear probing, at most half full; an entry is taken out only when the
 * write that added it failed (`remove`: the entries after it moved back, no tombstones; segments
 * are immutable, and stored events are never taken back). In SHARDS parts, the hash's top bits choosing the part
 * and its low bits the slot: a part that fills up doubles alone, so adding an ID never stops the
 * event loop for long (one table of 8 million ingested IDs took some 300 ms to double).
 */
export class MessageIdTable {
  readonly #idOf: (value: number) => string
  readonly #shards: Shard[] = []
  /** The hash's bits below its part's (32 with one part: `>>>` takes a count mod 32, so that case is spelled out). */
  readonly #shift: number
  /** Where a part's doubled slots are asked for ahead of its doubling (undefined: allocated when it doubles). */
  readonly #pages: PagesInTurn | undefined
  /**
   * Asked for only once the table holds more IDs than it was made for: a table built whole (a
   * segment's, sized for its events) has parts a quarter to a half full, some past 3/8, which
   * would ask for memory they may never double into; the store's index grows past the room its
   * load made (segment-builder.ts: an event for every 128 bytes of the file) with the ingests,
   * and asks then.
   */
  readonly #expected: number
  #size = 0

  /**
   * `idOf(value)`: the message_id stored with that value (the owner keeps the IDs). `parts`: 1 for
   * a table that lives only as long as one ingest (no doubling pauses to avoid there, and one
   * pair of arrays instead of 64). `pages`: where a part asks for its doubled slots ahead (the
   * shared index pages by default; none for a one-part table).
   */
  constructor (idOf: (value: number) => string, expected = 16, parts: 1 | typeof SHARDS = SHARDS, pages: PagesInTurn | undefined = parts === 1 ? undefined : indexPages) {
    this.#idOf = idOf
    this.#pages = pages
    this.#expected = expected
    this.#shift = parts === 1 ? 32 : SHARD_SHIFT
    let capacity = 16
    while (capacity * parts < expected * 2) capacity *= 2
    for (let i = 0; i < parts; i++) this.#shards.push(new Shard(capacity))
  }

  get size (): number {
    return this.#size
  }

  /** The value stored for this ID, or -1. `hash` is messageIdHash(id), when the caller has it already. */
  get (id: string, hash: number = messageIdHash(id)): number {
    return this.find(hash, id)
  }

  /**
   * The value stored for the ID whose hash this is, or -1. `id` may be a function that makes it,
   * for a caller that has the ID's hash but not yet its string (a line kept as bytes): it is
   * called only when a stored ID has that hash, which for a new ID is rare, and at most once.
   */
  find (hash: number, id: string | (() => string)): number {
    const shard = this.#shard(hash)
    const slots = shard.slots
    const mask = shard.mask
    let wanted = typeof id === 'string' ? id : undefined
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[2 * slot]!
      if (stored === 0) return -1
      if (stored === hash) {
        const value = slots[2 * slot + 1]!
        // A negative value is another owner's (the memory store keeps its added events in the loaded segment's table).
        if (value < 0) continue
        wanted ??= (id as () => string)()
        if (this.#idOf(value) === wanted) return value
      }
    }
  }

  /** Whether any entry has this hash (an ID not in the table: one probe, no ID compared or made). */
  hasHash (hash: number): boolean {
    const shard = this.#shard(hash)
    const slots = shard.slots
    const mask = shard.mask
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[2 * slot]!
      if (stored === 0) return false
      if (stored === hash) return true
    }
  }

  /**
   * Reads the slot where a search for this hash starts, and returns its content (to be combined
   * and kept, so the read is not optimised away). For a group of lookups in a large table: a
   * loop of these first lets the CPU wait for their cache misses side by side, where the
   * lookups, each waited for before the next, take them one after another.
   */
  touch (hash: number): number {
    const shard = this.#shard(hash)
    return shard.slots[2 * (hash & shard.mask)]!
  }

  /**
   * The first value stored with this hash for which `matches` says yes, or -1: for an owner that
   * tells its IDs apart by more than the value (the memory store's added events, found by time).
   */
  findWhere (hash: number, matches: (value: number) => boolean): number {
    const shard = this.#shard(hash)
    const slots = shard.slots
    const mask = shard.mask
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[2 * slot]!
      if (stored === 0) return -1
      if (stored === hash && matches(slots[2 * slot + 1]!)) return slots[2 * slot + 1]!
    }
  }

  /** Stores a value for an ID the table does not hold yet (the caller has looked it up first). */
  add (id: string, value: number, hash: number = messageIdHash(id)): void {
    this.addHashed(hash, value)
  }

  /** add, for a caller that has the ID's hash (messageIdHash) and not its string. */
  addHashed (hash: number, value: number): void {
    const shard = this.#shard(hash)
    if ((shard.size + 1) * 2 > shard.capacity) {
      shard.grow()
    } else if (shard.ahead === undefined && (shard.size + 1) * 8 > shard.capacity * ASK_AHEAD_EIGHTHS && this.#pages !== undefined && this.#size >= this.#expected && 16 * shard.capacity >= ASK_AHEAD_MIN_BYTES) {
      shard.ahead = this.#pages.ask(16 * shard.capacity)
    }
    const slots = shard.slots
    const mask = shard.mask
    let slot = hash & mask
    while (slots[2 * slot] !== 0) slot = (slot + 1) & mask
    slots[2 * slot] = hash
    slots[2 * slot + 1] = value
    shard.size++
    this.#size++
  }

  /** Takes out the entry of this hash and value, if there is one (an insert whose write failed). */
  remove (hash: number, value: number): void {
    if (this.#shard(hash).remove(hash, value)) this.#size--
  }

  #shard (hash: number): Shard {
    return this.#shards[this.#shift === 32 ? 0 : hash >>> this.#shift]!
  }
}

/** Parts of a table: a power of two, chosen by the hash's top bits. */
const SHARDS = 64

/**
 * A part's doubled slots are asked for once it is 3/8 full (it doubles at 1/2), their pages given
 * on the pool meanwhile (PagesInTurn): the doubling then only copies the entries over. A part
 * that doubles before its memory is ready allocates as before. Why: on this virtual machine a
 * page the process never wrote costs 2 to 12 µs on its first write (prefaulted-buffers.ts), and
 * the index's doublings were most of the event loop's page faults in an ingest's later rounds: at
 * 8.4 million IDs the 64 parts double from 128 to 256 MiB, 65,000 pages, some 0.7 s of the main
 * thread within a few seconds of ingest (BENCHMARKS.md, "What profiling found").
 */
const ASK_AHEAD_EIGHTHS = 3
/** Doubled slots smaller than this are allocated as they come: their few pages cost less than the asking. */
const ASK_AHEAD_MIN_BYTES = 256 * 1024

/** Where the store's indexes ask for their parts' doubled slots: one queue for the process, one read at a time. */
const indexPages = new PagesInTurn()
const SHARD_SHIFT = 32 - Math.log2(SHARDS)

/**
 * One part of a MessageIdTable: each slot's hash (0 marks an empty slot: messageIdHash is never
 * 0) and value side by side in one array, so that a lookup or an insert touches one cache line,
 * not one in each of two arrays (in tables of millions of IDs, each is a miss of the CPU's cache).
 */
class Shard {
  slots: Int32Array
  mask: number
  size = 0
  /** The doubled slots' memory, asked for ahead (MessageIdTable.addHashed). */
  ahead: PagesAsked | undefined

  constructor (capacity: number) {
    this.slots = new Int32Array(2 * capacity)
    this.mask = capacity - 1
  }

  get capacity (): number {
    return this.mask + 1
  }

  /**
   * Takes out an entry, moving back the ones after it in its run that it would otherwise cut off
   * from their home slot (linear probing's deletion, without tombstones).
   */
  remove (hash: number, value: number): boolean {
    const slots = this.slots
    const mask = this.mask
    let slot = hash & mask
    for (; slots[2 * slot] !== 0; slot = (slot + 1) & mask) {
      if (slots[2 * slot] === hash && slots[2 * slot + 1] === value) break
    }
    if (slots[2 * slot] === 0) return false
    let hole = slot
    for (let next = (hole + 1) & mask; slots[2 * next] !== 0; next = (next + 1) & mask) {
      const home = slots[2 * next]! & mask
      // The entry at `next` may move into the hole when its home is not between the hole and it.
      const between = hole <= next ? home > hole && home <= next : home > hole || home <= next
      if (between) continue
      slots[2 * hole] = slots[2 * next]!
      slots[2 * hole + 1] = slots[2 * next + 1]!
      hole = next
    }
    slots[2 * hole] = 0
    slots[2 * hole + 1] = 0
    this.size--
    return true
  }

  grow (): void {
    const old = this.slots
    const capacity = 2 * this.capacity
    const mask = capacity - 1
    // Memory asked for ahead, if its read has ended: all zeros (empty slots), its pages given.
    const memory = this.ahead?.take()
    this.ahead = undefined
    const slots = memory !== undefined && memory.byteLength === 8 * capacity ? new Int32Array(memory) : new Int32Array(2 * capacity)
    for (let i = 0; i < old.length; i += 2) {
      const hash = old[i]!
      if (hash === 0) continue
      let slot = hash & mask
      while (slots[2 * slot] !== 0) slot = (slot + 1) & mask
      slots[2 * slot] = hash
      slots[2 * slot + 1] = old[i + 1]!
    }
    this.slots = slots
    this.mask = mask
  }
}

/**
 * The hash's starting state, random for each process (identifier-seed.ts, shared with the wire
 * scan, whose hash of a message_id then needs only messageIdHashOfFnv): IDs are chosen by whoever
 * ingests, and with a hash they could compute, a client could post IDs that all land in one run
 * of slots and make every insert and lookup walk it (about 20,000 such IDs took a second to add,
 * and slowed every later lookup twentyfold). V8's own string hash is seeded for the same reason.
 */
const ID_HASH_SEED = IDENTIFIER_SEED

/**
 * FNV-1a over the ID's UTF-16 code units from a seeded start, then murmur3's finaliser, never 0
 * (the table's empty mark). The finaliser is for the low bits, which pick the slot: FNV-1a's
 * multiplications carry a character only upwards, so IDs that differ in one character (`…-1041`,
 * `…-1042`) would land in runs of neighbouring slots, which linear probing turns into long
 * searches. `seed` is for tests.
 */
export function messageIdHash (id: string, seed: number = ID_HASH_SEED): number {
  let hash = 0x811c9dc5 ^ seed
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return finished(hash)
}

/**
 * messageIdHash of the ID whose bytes are bytes[start, end), for an ID of printable ASCII (one
 * byte a UTF-16 code unit, so the same hash as of its string), without making the string.
 */
export function messageIdHashOfBytes (bytes: Buffer, start: number, end: number, seed: number = ID_HASH_SEED): number {
  let hash = 0x811c9dc5 ^ seed
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return finished(hash)
}

/** messageIdHash of a message_id whose FNV-1a from the shared seed is `fnv` (the wire scan's WireParts.idFnv). */
export function messageIdHashOfFnv (fnv: number): number {
  return finished(fnv)
}

/** murmur3's finaliser, never 0. */
function finished (hash: number): number {
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35)
  hash ^= hash >>> 16
  return hash === 0 ? 1 : hash
}
