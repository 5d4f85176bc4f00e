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

/** The options of the pieces compressed as they come (zlib's default level, as the other answers). */
const REGION_OPTIONS = { finishFlush: constants.Z_SYNC_FLUSH }

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

  /** Stops the region under way, if any (the answer was cut or abandoned). */
  destroy (): void {
    this.#region?.destroy()
    this.#region = undefined
  }

  #open (): DeflateRaw {
    const region = createDeflateRaw(REGION_OPTIONS)
    region.on('data', (chunk: Buffer) => { this.#output.push(chunk) })
    // Also reported to whichever write or end waits; kept so the next call fails too.
    region.on('error', (error) => { this.#failure ??= error })
    return region
  }

  /** Ends the region under way once its last output is out (its 'end' comes after its last 'data'). */
  async #closeRegion (): Promise<void> {
    this.#throwIfFailed()
    const region = this.#region
    if (region === undefined) return
    this.#region = undefined
    await new Promise<void>((resolve, reject) => {
      region.once('end', resolve)
      region.once('error', reject)
      region.end()
    })
  }

  #throwIfFailed (): void {
    if (this.#failure !== undefined) throw this.#failure
  }
}
