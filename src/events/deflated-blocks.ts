import { promisify } from 'node:util'
import { constants, crc32, deflateRaw } from 'node:zlib'
import type { DeflatedPiece } from '../http/gzip-splicer.js'

const deflate = promisify(deflateRaw)

/**
 * Events per block: a block of the memory store's events is about 900 kB of JSON, 145 kB
 * deflated. Smaller blocks compress worse (each starts with an empty window and its own codes:
 * on the benchmark's events, 256 a block 17.1% of the bytes, 1,024 16.2%, 4,096 15.9%), and
 * leave more of an answer to compress as it goes.
 */
export const BLOCK_EVENTS = 4096

/**
 * The kept blocks' deflated bytes at most (64 MiB: every block of about two million events).
 * Past it, the blocks used longest ago are dropped, to be compressed again when asked.
 */
export const BLOCKS_MAX_BYTES = 64 * 1024 * 1024

/**
 * Compressed once, so as well as zlib can: level 9 with its filtered strategy (for text of
 * small repeats such as JSON keys) took the benchmark's large answer from 17.6% of its bytes
 * at the default level to 15.9%, at about 2.7 times zlib's time, spent once per block.
 */
const BLOCK_OPTIONS = {
  level: 9,
  memLevel: 9,
  strategy: constants.Z_FILTERED,
  finishFlush: constants.Z_SYNC_FLUSH
}

const COMMA = 0x2c

interface KeptBlock {
  readonly piece: Promise<DeflatedPiece>
  /** The block's first event's first byte and its last event's end in the store's buffer. */
  readonly start: number
  readonly end: number
  /** Its deflated size once made (0 until then). */
  size: number
}

/**
 * The memory store's events, gzip-ready: the events of positions [n·BLOCK_EVENTS, (n+1)·BLOCK_EVENTS)
 * of a store's encoded buffer (EncodedMessages: `bytes` and `offsets`), as they stand in an
 * answer (each after a comma), deflated once and kept. A gzip answer that holds all of a block's
 * events, one after the other, sends the kept bytes instead of compressing them again
 * (gzipped-events-stream.ts, gzip-splicer.ts); the rest of it is compressed as it goes.
 *
 * Why: the large answer (19 MB) took 6.98 times as long gzipped as plain, zlib's work alone at
 * the default level being 3.5 times the plain answer's time (BENCHMARKS.md, "Compression").
 *
 * A block is known by its buffer and number, and checked against the offsets it is asked with:
 * the memory store's buffers are never written again where they hold events
 * (memory-segment.ts), so the same buffer, number and offsets are the same text.
 */
export class DeflatedBlocks {
  readonly blockEvents: number
  readonly #maxBytes: number
  readonly #bufferIds = new WeakMap<Buffer, number>()
  #nextBufferId = 0
  /** In the order they were last used, the oldest first. */
  readonly #kept = new Map<string, KeptBlock>()
  #bytes = 0
  #made = 0

  constructor (blockEvents = BLOCK_EVENTS, maxBytes = BLOCKS_MAX_BYTES) {
    this.blockEvents = blockEvents
    this.#maxBytes = maxBytes
  }

  /** The deflated blocks kept, and their bytes (for tests and the metrics). */
  get count (): number {
    return this.#kept.size
  }

  get bytes (): number {
    return this.#bytes
  }

  /** Blocks compressed since the start, kept ones and dropped ones. */
  get made (): number {
    return this.#made
  }

  /** Block `number` of the events of `bytes` and `offsets`: kept, or made now (on libuv's pool) and kept. */
  block (bytes: Buffer, offsets: ArrayLike<number>, number: number): Promise<DeflatedPiece> {
    const from = number * this.blockEvents
    const to = from + this.blockEvents
    const start = offsets[from]!
    const end = offsets[to]!
    let bufferId = this.#bufferIds.get(bytes)
    if (bufferId === undefined) {
      bufferId = this.#nextBufferId++
      this.#bufferIds.set(bytes, bufferId)
    }
    const key = `${bufferId}:${number}`
    const kept = this.#kept.get(key)
    if (kept !== undefined) {
      this.#forget(key, kept)
      if (kept.start === start && kept.end === end) {
        this.#kept.set(key, kept)
        this.#bytes += kept.size
        return kept.piece
      }
    }
    this.#made++
    const block: KeptBlock = { piece: deflatedText(blockText(bytes, offsets, from, to)), start, end, size: 0 }
    this.#kept.set(key, block)
    block.piece.then((piece) => {
      if (this.#kept.get(key) !== block) return
      block.size = piece.deflated.length
      this.#bytes += block.size
      this.#dropOldest()
    }, () => { if (this.#kept.get(key) === block) this.#kept.delete(key) })
    return block.piece
  }

  #forget (key: string, block: KeptBlock): void {
    this.#kept.delete(key)
    this.#bytes -= block.size
  }

  #dropOldest (): void {
    for (const [key, block] of this.#kept) {
      if (this.#bytes <= this.#maxBytes) return
      this.#forget(key, block)
    }
  }
}

/** The events [from, to) as an answer holds them after an event: each after a comma. */
function blockText (bytes: Buffer, offsets: ArrayLike<number>, from: number, to: number): Buffer {
  const text = Buffer.allocUnsafe(offsets[to]! - offsets[from]! + (to - from))
  let at = 0
  for (let position = from; position < to; position++) {
    text[at++] = COMMA
    at += bytes.copy(text, at, offsets[position]!, offsets[position + 1]!)
  }
  return text
}

async function deflatedText (text: Buffer): Promise<DeflatedPiece> {
  return { deflated: await deflate(text, BLOCK_OPTIONS), crc: crc32(text), length: text.length }
}

/** The blocks every answer of this process shares. */
export const deflatedBlocks = new DeflatedBlocks()
