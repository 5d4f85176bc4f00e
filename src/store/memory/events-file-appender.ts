import { constants, fstatSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { StoreUnavailableError } from '../event-store.js'

const NEWLINE = Buffer.from('\n')

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
  #handle: FileHandle | undefined
  #endsMidLine = false

  constructor (file: string) {
    this.#file = file
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
    const lines = typeof text === 'string' ? Buffer.from(text) : text
    const bytes = this.#endsMidLine ? Buffer.concat([NEWLINE, lines]) : lines
    let size: number
    try {
      // Other processes append to the file too (cluster workers, one at a time): its size now, to
      // cut back to. fstat reads the inode, never the disk: no reason to wait a turn for it.
      size = fstatSync(handle.fd).size
    } catch (error) {
      throw new StoreUnavailableError(`cannot append to ${this.#file}: ${(error as Error).message}`, { cause: error })
    }
    try {
      let written = 0
      while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten
    } catch (error) {
      await handle.truncate(size).catch(() => {})
      throw new StoreUnavailableError(`cannot append to ${this.#file}: ${(error as Error).message}`, { cause: error })
    }
    this.#endsMidLine = false
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
      this.#endsMidLine = last[0] !== 0x0a
    }
    this.#handle = handle
    return handle
  }
}
