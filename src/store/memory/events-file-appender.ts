import { constants, fstatSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { StoreUnavailableError } from '../event-store.js'

const NEWLINE = Buffer.from('\n')
const LINE_BREAK = 0x0a

/**
 * Opened for appending, with every write synchronised to the disk (O_DSYNC): a write returns once
 * its bytes are as durable as after write and fdatasync, in one call on libuv's thread pool.
 * Written as two calls (stat, write, fdatasync: three turns of the thread pool, each started only
 * once the event loop came round to it), an append of an ingest's group took 5.8 ms on average
 * under the benchmark's load, its own I/O about 1 ms of that: the rest was waiting for the main
 * thread, busy reading the next batches (BENCHMARKS.md, "What profiling found").
 */
const APPEND_DSYNC = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC

/**
 * Appends lines to EVENTS_FILE, the memory store's durable form: each append is one write of
 * whole lines, on disk (O_DSYNC) before it resolves, so an event acknowledged is an event that
 * survives a crash. A file that ends without a line break (written by hand, or by another tool)
 * gets one before the first append. An append that fails (a full disk, say) is cut back off the
 * file, so no half line stays in it, and is StoreUnavailableError (503).
 */
export class EventsFileAppender {
  readonly #file: string
  readonly #tornTail: TornTail | undefined
  #handle: FileHandle | undefined
  #endsMidLine = false
  /** An append that failed and could not be cut back off: the size to cut to, and the size it left. */
  #failedCut: { to: number, size: number } | undefined

  /** `tornTail`: the file's last line as the load found it, cut short by a crash (load-memory-store.ts). */
  constructor (file: string, tornTail?: TornTail) {
    this.#file = file
    this.#tornTail = tornTail
  }

  /** Appends the text or its UTF-8 bytes (whole lines, each ending in a line break) and waits until it is on disk. */
  async append (text: string | Buffer): Promise<void> {
    if (text.length === 0) return
    let handle: FileHandle
    try {
      handle = this.#handle ?? await this.#open()
    } catch (error) {
      throw new StoreUnavailableError(`cannot open ${this.#file} to append: ${(error as Error).message}`, { cause: error })
    }
    let size: number
    try {
      // Other processes append to the file too (cluster workers, one at a time): its size now, to
      // cut back to. fstat reads the inode, never the disk: no reason to wait a turn for it.
      size = fstatSync(handle.fd).size
      if (this.#failedCut !== undefined) size = await this.#cutAgain(handle, size)
    } catch (error) {
      throw new StoreUnavailableError(`cannot append to ${this.#file}: ${(error as Error).message}`, { cause: error })
    }
    const lines = typeof text === 'string' ? Buffer.from(text) : text
    const bytes = this.#endsMidLine ? Buffer.concat([NEWLINE, lines]) : lines
    try {
      let written = 0
      while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten
    } catch (error) {
      try {
        await handle.truncate(size)
      } catch {
        // Part of the lines may stay at the end of the file: cut off before the next append, or
        // (the file changed meanwhile) ended there, so that no event ever shares their line.
        this.#failedCut = { to: size, size: fstatSizeOr(handle, -1) }
      }
      throw new StoreUnavailableError(`cannot append to ${this.#file}: ${(error as Error).message}`, { cause: error })
    }
    this.#endsMidLine = false
  }

  /**
   * After an append whose cut-back failed: cut again, when the file is as that append left it;
   * otherwise (others appended since, or its size is unknown) the next lines start on a line of
   * their own. Resolves with the file's size, to cut back to; a cut that fails again throws.
   */
  async #cutAgain (handle: FileHandle, size: number): Promise<number> {
    const failed = this.#failedCut!
    if (size === failed.size) {
      await handle.truncate(failed.to)
      this.#failedCut = undefined
      return failed.to
    }
    this.#failedCut = undefined
    this.#endsMidLine = true
    return size
  }

  async close (): Promise<void> {
    await this.#handle?.close()
    this.#handle = undefined
  }

  async #open (): Promise<FileHandle> {
    // O_APPEND: every write goes to the end of the file, whoever else appends to it (cluster workers).
    const handle = await open(this.#file, APPEND_DSYNC, 0o666)
    const { size } = await handle.stat()
    if (size > 0) {
      const last = Buffer.alloc(1)
      await handle.read(last, 0, 1, size - 1)
      this.#endsMidLine = last[0] !== LINE_BREAK
    }
    if (this.#endsMidLine && await this.#stillTorn(handle, size)) {
      // Cut off rather than ended with a line break: that would leave a bad line in the middle
      // of the file, which stops the next start-up.
      await handle.truncate(this.#tornTail!.offset)
      this.#endsMidLine = false
    }
    this.#handle = handle
    return handle
  }

  /**
   * Whether the file still ends with the cut line the load skipped: as long as then, and no line
   * break in it. Another process appending to the file since (a cluster's worker) would have
   * cut it first, or written whole lines after it, each ending in a line break.
   */
  async #stillTorn (handle: FileHandle, size: number): Promise<boolean> {
    const torn = this.#tornTail
    if (torn === undefined || size !== torn.offset + torn.bytes) return false
    const tail = Buffer.alloc(torn.bytes)
    const { bytesRead } = await handle.read(tail, 0, torn.bytes, torn.offset)
    return bytesRead === torn.bytes && !tail.includes(LINE_BREAK)
  }
}

/** The file's last line when a crash cut it short: its number, where it starts, and its length in bytes. */
export interface TornTail {
  line: number
  offset: number
  bytes: number
}

function fstatSizeOr (handle: FileHandle, fallback: number): number {
  try {
    return fstatSync(handle.fd).size
  } catch {
    return fallback
  }
}
