import { constants, fstatSync, readSync, statSync } from 'node:fs'
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

/** How much of the file's end is read at a time, looking for its last line break. */
const TAIL_READ_BYTES = 64 * 1024

/**
 * Appends lines to EVENTS_FILE, the memory store's durable form: each append is one write of
 * whole lines, on disk (O_DSYNC) before it resolves, so an event acknowledged is an event that
 * survives a crash. An append that fails (a full disk, say) is cut back off the file and is
 * StoreUnavailableError (503).
 *
 * Before each append the file's end is looked at (one byte, read from the page cache, when it
 * ends with a line break as it should): every append ends with one, so bytes after the last line
 * break that are the beginning of a JSON line are what an append cut short left (a crash, a
 * worker killed mid-write, a cut-back that failed), never acknowledged: they are cut off. A whole
 * line without its line break (written by hand, or by another tool) gets one; so does a bad line
 * (a hand edit: kept, for the next start-up to name). Appends take turns (one process, or the
 * cluster's write lock), so this holds across the workers sharing the file, whoever wrote last.
 */
export class EventsFileAppender {
  readonly #file: string
  #handle: FileHandle | undefined
  /** The loaded, then opened, file's inode: what its path must still name (see #checkSameFile). */
  #identity: string | undefined

  constructor (file: string) {
    this.#file = file
    // The file as the store loaded it (made once it is loaded), when there is one: a replacement
    // before the first append is noticed too.
    try {
      this.#identity = String(statSync(file).ino)
    } catch {}
  }

  /** Appends the text or its UTF-8 bytes (whole lines, each ending in a line break) and waits until it is on disk. */
  async append (text: string | Buffer): Promise<void> {
    if (text.length === 0) return
    let handle: FileHandle
    try {
      handle = this.#handle ??= await open(this.#file, APPEND_DSYNC, 0o666)
    } catch (error) {
      throw new StoreUnavailableError(`cannot open ${this.#file} to append: ${(error as Error).message}`, { cause: error })
    }
    let size: number
    let endsMidLine: boolean
    try {
      // Its size now, to cut back to (others append too, one at a time). fstat and a pread of the
      // last byte read the inode and the page cache, never the disk: no reason to wait a turn.
      const opened = fstatSync(handle.fd)
      this.#checkSameFile(opened)
      ;({ size, endsMidLine } = await this.#wholeLinesEnd(handle, opened.size))
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error
      throw new StoreUnavailableError(`cannot append to ${this.#file}: ${(error as Error).message}`, { cause: error })
    }
    const lines = typeof text === 'string' ? Buffer.from(text) : text
    const bytes = endsMidLine ? Buffer.concat([NEWLINE, lines]) : lines
    try {
      let written = 0
      while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten
    } catch (error) {
      // Should this cut fail too, the next append cuts what is left (above).
      await handle.truncate(size).catch(() => {})
      throw new StoreUnavailableError(`cannot append to ${this.#file}: ${(error as Error).message}`, { cause: error })
    }
  }

  async close (): Promise<void> {
    await this.#handle?.close()
    this.#handle = undefined
    this.#identity = undefined
  }

  /**
   * The path must still name the file opened: one replaced on disk (an editor's or `sed -i`'s
   * rename over it) or removed would take these appends into a file no one reads again, and the
   * events acknowledged would be gone at the next start-up. Appends are refused (503) instead,
   * until a restart loads the file the path names; a stat of the path costs under a microsecond,
   * once an append. The inode alone is compared: the opened file's cannot be reused while it is
   * open, and some overlay filesystems give the path and the open file different devices.
   */
  #checkSameFile (opened: { ino: number }): void {
    const identity = String(opened.ino)
    this.#identity ??= identity
    let named: string
    try {
      named = String(statSync(this.#file).ino)
    } catch {
      named = 'none'
    }
    if (named !== this.#identity || identity !== this.#identity) {
      throw new StoreUnavailableError(`${this.#file} was replaced or removed on disk after the provider opened it: its appends would be lost at the next start-up, so ingests are refused until a restart loads the file as it is now`)
    }
  }

  /**
   * The file's size once what an append cut short is cut off it, and whether the next line needs
   * a line break before it (a whole or bad last line without one).
   */
  async #wholeLinesEnd (handle: FileHandle, size: number): Promise<{ size: number, endsMidLine: boolean }> {
    if (size === 0) return { size, endsMidLine: false }
    const last = Buffer.alloc(1)
    readSync(handle.fd, last, 0, 1, size - 1)
    if (last[0] === LINE_BREAK) return { size, endsMidLine: false }
    const start = lastLineStart(handle.fd, size)
    const tail = Buffer.alloc(size - start)
    readSync(handle.fd, tail, 0, tail.length, start)
    if (!isCutShortLine(tail.toString('utf8'))) return { size, endsMidLine: true }
    await handle.truncate(start)
    return { size: start, endsMidLine: false }
  }
}

/** Where the file's last line starts: after its last line break, or at 0. */
function lastLineStart (fd: number, size: number): number {
  const chunk = Buffer.alloc(TAIL_READ_BYTES)
  let end = size
  while (end > 0) {
    const from = Math.max(0, end - TAIL_READ_BYTES)
    readSync(fd, chunk, 0, end - from, from)
    const at = chunk.subarray(0, end - from).lastIndexOf(LINE_BREAK)
    if (at !== -1) return from + at + 1
    end = from
  }
  return 0
}

/**
 * Whether a last line without its line break is what an append cut short leaves: the beginning of
 * a JSON text, not a whole one (JSON.parse fails at its very end, as it does on any prefix of a
 * line the provider writes). A line that is whole, or that fails before its end (a hand edit), is
 * not one. The memory store's load skips such a line, and the next append cuts it off.
 */
export function isCutShortLine (text: string): boolean {
  const trimmed = text.trimEnd()
  if (!trimmed.startsWith('{')) return false
  try {
    JSON.parse(trimmed)
    return false
  } catch (error) {
    const message = (error as Error).message
    if (/end of JSON input|Unterminated string/.test(message)) return true
    const position = /at position (\d+)/.exec(message)
    return position !== null && Number(position[1]) >= trimmed.length
  }
}
