import { constants, crc32, createDeflateRaw, type DeflateRaw } from 'node:zlib'
import { crc32Combine } from './crc32-combine.js'

/**
 * A piece of text compressed ahead, on its own, as raw deflate that ends in a sync flush: its
 * output ends on a byte boundary, with no final block, and refers to nothing before it, so it can
 * stand anywhere in a deflate stream. With its text's CRC-32 and length for the gzip trailer.
 */
export interface DeflatedPiece {
  readonly deflated: Buffer
  readonly crc: number
  readonly length: number
}

/** A gzip member's header: deflate, no name or time, Unix (what zlib's gzip writes). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])

/** An empty final block with fixed codes: the end of a deflate stream made of sync-flushed pieces. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00])

/**
 * Raw deflate streams between regions, kept for the next one (of this answer or another): a
 * region ends with a sync flush and a reset, which forgets its text, so the next starts as a new
 * stream would. A new stream per region (two an answer, ninety answers a second) grew the
 * provider's RSS by about 50 MB over 15 s of gzip answers: each holds some 270 kB of zlib's
 * state and its output buffers, freed only once V8 collects it (BENCHMARKS.md, "Compression").
 */
const idleRegions: DeflateRaw[] = []

/** More than the regions open at once under load (one an answer being written). */
const IDLE_REGIONS_MAX = 16

/**
 * One gzip member written from text compressed as it comes and pieces compressed ahead
 * (DeflatedPiece), in any order: text runs through a raw deflate stream (a region) that ends,
 * flushed, before a piece goes in, and a new region starts after it, so nothing refers across a
 * piece. The trailer's CRC-32 combines the pieces' own (crc32-combine.ts): no text is read twice.
 *
 * Used in turns: `text` or `piece`, then `take` what came out; `end` once. The output is
 * gzip as RFC 1952 has it, one member, which every client decompresses as any other.
 */
export class GzipSplicer {
  #crc = 0
  #length = 0
  #region: DeflateRaw | undefined
  #output: Buffer[] = [GZIP_HEADER]
  #failure: Error | undefined
  readonly #onData = (chunk: Buffer): void => { this.#output.push(chunk) }
  // Also reported to whichever write or flush waits; kept so the next call fails too.
  readonly #onError = (error: Error): void => { this.#failure ??= error }

  /** Compresses text; resolves once zlib has taken all of it (the buffer may then be reused). */
  async text (text: Buffer): Promise<void> {
    this.#throwIfFailed()
    if (text.length === 0) return
    this.#crc = crc32(text, this.#crc)
    this.#length += text.length
    const region = this.#region ??= this.#open()
    await new Promise<void>((resolve, reject) => {
      region.write(text, (error) => { if (error == null) resolve(); else reject(error) })
    })
  }

  /** Puts a piece compressed ahead next, after what was given before it. */
  async piece (piece: DeflatedPiece): Promise<void> {
    await this.#closeRegion()
    this.#output.push(piece.deflated)
    this.#crc = crc32Combine(this.#crc, piece.crc, piece.length)
    this.#length += piece.length
  }

  /** The gzip bytes made so far, in order. */
  take (): Buffer[] {
    const output = this.#output
    this.#output = []
    return output
  }

  /** Ends the member: the last region, the final block, the trailer. Then take() the rest. */
  async end (): Promise<void> {
    await this.#closeRegion()
    const trailer = Buffer.allocUnsafe(8)
    trailer.writeUInt32LE(this.#crc >>> 0, 0)
    // ISIZE: the text's length modulo 2^32.
    trailer.writeUInt32LE(this.#length % 0x100000000, 4)
    this.#output.push(FINAL_BLOCK, trailer)
  }

  /** Stops the region under way, if any (the answer was cut or abandoned): a write may be on its way, so it is not kept. */
  destroy (): void {
    this.#region?.destroy()
    this.#region = undefined
  }

  #open (): DeflateRaw {
    const region = idleRegions.pop() ?? newRegion()
    region.on('data', this.#onData)
    region.on('error', this.#onError)
    return region
  }

  /**
   * Ends the region under way: a sync flush, whose output is out once its callback runs (zlib
   * pushes a write's output before calling back, and a flowing stream hands each push to 'data'
   * at once; anything still buffered is read here, in order), then a reset, and the stream waits
   * for the next region.
   */
  async #closeRegion (): Promise<void> {
    this.#throwIfFailed()
    const region = this.#region
    if (region === undefined) return
    this.#region = undefined
    await new Promise<void>((resolve) => { region.flush(constants.Z_SYNC_FLUSH, resolve) })
    while (region.readableLength > 0 && region.read() !== null);
    region.off('data', this.#onData)
    region.off('error', this.#onError)
    this.#throwIfFailed()
    region.reset()
    if (idleRegions.length < IDLE_REGIONS_MAX) idleRegions.push(region)
    else region.destroy()
  }

  #throwIfFailed (): void {
    if (this.#failure !== undefined) throw this.#failure
  }
}

/** A raw deflate stream at zlib's default level (as the other answers), flowing into its 'data' listener. */
function newRegion (): DeflateRaw {
  const region = createDeflateRaw()
  // One that fails while idle is never used again (a failure while in use reaches its splicer too).
  region.on('error', () => {
    const idle = idleRegions.indexOf(region)
    if (idle !== -1) idleRegions.splice(idle, 1)
  })
  return region
}
