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
 * The kept blocks' deflated bytes (64 MiB: every block of about two million events): once a block
 * made passes it, the blocks used longest ago are dropped, to be compressed again when asked (a
 * block being made, or still being sent by an answer, holds its memory until then).
 */
export const BLOCKS_MAX_BYTES = 64 * 1024 * 1024

/**
 * Blocks being made at once, in the whole process: two of libuv's four threads, so files (the
 * ingest's appends and flushes) always have threads left, and a flood of answers over blocks
 * not kept (a store larger than the kept bytes, read over and over) costs level 9's work on two
 * threads at most. An answer whose block cannot be made now compresses its events as it goes,
 * at the default level, as any other part of the answer.
 */
export const BLOCKS_MADE_AT_ONCE = 2

/**
 * Compressed once, so as well as zlib can: level 9 with its filtered strategy (for text of
 * small repeats such as JSON keys) took the benchmark's large answer (as blocks of 4,096) from
 * 17.6% of its bytes at the default level to 15.9%, at about 2.7 times zlib's time, spent once
 * per block.
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
 * A block is known by where its bytes and offsets are stored (their memory and place in it, not
 * the Buffer and array objects: each ingest hands the memory store's last segment over as new
 * views of the same memory) and its number, and is checked against its first and last offsets.
 * The memory store never writes its buffers again where they hold events, nor their offsets
 * (memory-segment.ts: a shared room grows past what it holds), so the same memory, places and
 * number are the same text.
 *
 * The text of a block is put together (4,096 copies) and its CRC-32 computed on the main thread,
 * about half a millisecond; the deflating runs on libuv's threads.
 */
export class DeflatedBlocks {
  readonly blockEvents: number
  readonly #maxBytes: number
  readonly #deflate: (text: Buffer) => Promise<Buffer>
  readonly #memoryIds = new WeakMap<ArrayBufferLike, number>()
  #nextMemoryId = 0
  #making = 0
  /** In the order they were last used, the oldest first. */
  readonly #kept = new Map<string, KeptBlock>()
  #bytes = 0
  #made = 0

  /** `deflate`: how a block's text is compressed (tests give one that fails). */
  constructor (blockEvents = BLOCK_EVENTS, maxBytes = BLOCKS_MAX_BYTES, deflate = deflateBlock) {
    this.blockEvents = blockEvents
    this.#maxBytes = maxBytes
    this.#deflate = deflate
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

  /**
   * Block `number` of the events of `bytes` and `offsets`: kept (or being made), or made now and
   * kept; undefined when it is neither and BLOCKS_MADE_AT_ONCE are being made: the caller
   * compresses its events as they go.
   */
  block (bytes: Buffer, offsets: Uint32Array, number: number): Promise<DeflatedPiece> | undefined {
    const from = number * this.blockEvents
    const to = from + this.blockEvents
    const start = offsets[from]!
    const end = offsets[to]!
    const key = `${this.#memoryId(bytes.buffer)}:${bytes.byteOffset}:${this.#memoryId(offsets.buffer)}:${offsets.byteOffset}:${number}`
    const kept = this.#kept.get(key)
    if (kept !== undefined) {
      this.#forget(key, kept)
      if (kept.start === start && kept.end === end) {
        this.#kept.set(key, kept)
        this.#bytes += kept.size
        return kept.piece
      }
    }
    if (this.#making >= BLOCKS_MADE_AT_ONCE) return undefined
    this.#making++
    this.#made++
    const block: KeptBlock = { piece: this.#deflated(blockText(bytes, offsets, from, to)), start, end, size: 0 }
    this.#kept.set(key, block)
    block.piece.then((piece) => {
      this.#making--
      if (this.#kept.get(key) !== block) return
      block.size = piece.deflated.length
      this.#bytes += block.size
      this.#dropOldest()
    }, () => {
      this.#making--
      if (this.#kept.get(key) === block) this.#kept.delete(key)
    })
    return block.piece
  }

  #memoryId (memory: ArrayBufferLike): number {
    let id = this.#memoryIds.get(memory)
    if (id === undefined) {
      id = this.#nextMemoryId++
      this.#memoryIds.set(memory, id)
    }
    return id
  }

  async #deflated (text: Buffer): Promise<DeflatedPiece> {
    return { deflated: await this.#deflate(text), crc: crc32(text), length: text.length }
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
function blockText (bytes: Buffer, offsets: Uint32Array, from: number, to: number): Buffer {
  const text = Buffer.allocUnsafe(offsets[to]! - offsets[from]! + (to - from))
  let at = 0
  for (let position = from; position < to; position++) {
    text[at++] = COMMA
    at += bytes.copy(text, at, offsets[position]!, offsets[position + 1]!)
  }
  return text
}

async function deflateBlock (text: Buffer): Promise<Buffer> {
  return await deflate(text, BLOCK_OPTIONS)
}

/** The blocks every answer of this process shares. */
export const deflatedBlocks = new DeflatedBlocks()
