import { openSync, read } from 'node:fs'

/**
 * The memory store's new memory given its pages by the kernel ahead of use, on a thread of libuv's
 * pool rather than on the event loop: a read of /dev/zero into a buffer makes the kernel write
 * its pages, as the store's bytes would.
 *
 * Why: the store copies events into new memory (the loaded file's bytes, an ingest's rooms), and
 * a page the process never wrote is given on its first write. On this virtual machine such a
 * page often costs the host a fault too (freed guest memory is handed back to it), so the first
 * touch of a page cost 2 to 12 µs in the measurements, paid by whichever thread touches it.
 * Under the benchmark's memory ingest that was a third of the main thread's time in the later
 * rounds: 0.7 to 1.1 µs of system time an event beside 1.7 to 1.8 µs of its own (BENCHMARKS.md,
 * "What profiling found").
 *
 * The event loop never writes where a read is on its way: it waits for the read, or uses other
 * memory. Without /dev/zero (another system) memory is used as it comes.
 */

/** /dev/zero, opened once for the process on first use (kept open); -1 when it cannot be. */
const zeroFiles = new Map<string, number>()

function zeroFile (path: string): number {
  let fd = zeroFiles.get(path)
  if (fd === undefined) {
    try {
      fd = openSync(path, 'r')
    } catch (error) {
      // Out of descriptors for now: asked again next time. Any other failure (no such file on
      // this system) stays.
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EMFILE' || code === 'ENFILE') return -1
      fd = -1
    }
    zeroFiles.set(path, fd)
  }
  return fd
}

/**
 * The largest buffer kept ready: a room for events of several KiB each (16,384 of them) would
 * otherwise keep a copy of its size, its pages given, for as long as no ingest takes it.
 */
export const READY_BUFFER_MAX = 16 * 1024 * 1024

/** Reads the zero file into buffer[start, end) on the thread pool; resolves when the read has ended, whatever its outcome. */
function readZeros (fd: number, buffer: Uint8Array, start: number, end: number): Promise<void> {
  return new Promise((resolve) => { read(fd, buffer, start, end - start, 0, () => { resolve() }) })
}

/**
 * One buffer kept ready for the next request of about the same size (an ingest's rooms are asked
 * for one after another, alike): while one room fills, the next one's pages are given. It costs
 * the ready buffer (about the size of the last room, its expected bytes given pages) until the
 * next room takes it.
 */
export class PrefaultedBuffers {
  readonly #zeroPath: string
  #ready: Buffer | undefined
  /** The read under way into the next buffer, if any. */
  #reading: Promise<void> | undefined

  /** `zeroPath`: what is read into a buffer to make the kernel give its pages (tests give another file). */
  constructor (zeroPath = '/dev/zero') {
    this.#zeroPath = zeroPath
  }

  /**
   * A buffer of at least `bytes`, its contents undefined (as Buffer.allocUnsafe's), of which the
   * first `expectedBytes` are likely to be written; the next one is made ready for a call like
   * this. A buffer is handed out only once its read has ended: one asked for sooner is allocated.
   */
  take (bytes: number, expectedBytes: number): Buffer {
    const ready = this.#ready
    this.#ready = undefined
    // A ready buffer much larger than asked for is not used: its pages would be held for nothing.
    const buffer = ready !== undefined && ready.length >= bytes && ready.length <= 2 * bytes ? ready : Buffer.allocUnsafeSlow(bytes)
    // A quarter more than asked: the next room's estimate differs a little from this one's, and
    // pages beyond the expected bytes are not given, so they cost no memory.
    this.#prepare(Math.ceil(1.25 * bytes), Math.min(bytes, expectedBytes))
    return buffer
  }

  /** Whether a buffer is ready (its read ended), for tests. */
  get hasReady (): boolean {
    return this.#ready !== undefined
  }

  /** Resolves once the read under way, if any, has ended (tests). */
  async settled (): Promise<void> {
    await this.#reading
  }

  #prepare (bytes: number, faultBytes: number): void {
    if (this.#reading !== undefined || bytes > READY_BUFFER_MAX) return
    const fd = zeroFile(this.#zeroPath)
    if (fd === -1) return
    const buffer = Buffer.allocUnsafeSlow(bytes)
    // A short or failed read leaves pages to be given on first write, as without it.
    this.#reading = readZeros(fd, buffer, 0, faultBytes).then(() => {
      this.#reading = undefined
      this.#ready = buffer
    })
  }
}

/** Bytes a read of the zero file covers (the 1,024 pages of a load's 4 MiB of events took 2 to 12 ms to give). */
const AHEAD_CHUNK = 4 * 1024 * 1024
/**
 * Reads on their way at once: the pool has 4 threads, and the file being loaded is read on them
 * too; one more read keeps the pages ahead while the first is on its way.
 */
const AHEAD_READS = 2

/**
 * A buffer filled from its start (the loaded events' bytes), its pages given ahead of the
 * filling: the chunks after the part being filled are read into. The filler says how far it is
 * about to write before it does (`claim`); a read on its way below that is waited for, and no
 * read is started there.
 */
export class PagesAhead {
  readonly #buffer: Uint8Array
  readonly #fd: number
  /** Reads on their way, in order of their place. */
  readonly #reading: Array<{ start: number, done: Promise<void> }> = []
  /** Where the next read starts: below it, every byte is read into or claimed. */
  #next = 0

  constructor (buffer: Uint8Array, zeroPath = '/dev/zero') {
    this.#buffer = buffer
    this.#fd = zeroFile(zeroPath)
  }

  /**
   * Bytes below `end` are about to be written: resolves once no read is on its way below it
   * (undefined when none was), and starts the reads of the chunks after it.
   */
  claim (end: number): Promise<void> | undefined {
    if (this.#fd === -1) return undefined
    const reading = this.#reading
    const waits: Array<Promise<void>> = []
    while (reading.length > 0 && reading[0]!.start < end) waits.push(reading.shift()!.done)
    if (this.#next < end) this.#next = end
    const length = this.#buffer.length
    while (reading.length < AHEAD_READS && this.#next < length) {
      const start = this.#next
      const stop = Math.min(length, start + AHEAD_CHUNK)
      reading.push({ start, done: readZeros(this.#fd, this.#buffer, start, stop) })
      this.#next = stop
    }
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => {})
  }

  /** Resolves once every read started has ended (tests). */
  async settled (): Promise<void> {
    await Promise.all(this.#reading.map(({ done }) => done))
  }
}

/**
 * Memory asked for ahead of its use, its pages given by reads of the zero file on the pool, one
 * read at a time in the order asked (the message_id index's parts, which double: all 64 of them
 * at about the same time, since IDs spread evenly over them). One at a time, so that the pool's
 * other threads stay free for the events file's appends: 64 reads of 4 MiB queued at once held an
 * append back by the time they took together.
 */
export class PagesInTurn {
  readonly #zeroPath: string
  readonly #read: (fd: number, memory: Uint8Array) => Promise<void>
  readonly #waiting: PagesAsked[] = []
  #reading = false
  /** Resolves once the read under way, if any, has ended (tests). */
  #done: Promise<void> = Promise.resolve()

  /** `zeroPath` and `read` (what reads the file into memory; resolves when the read has ended) are for tests. */
  constructor (zeroPath = '/dev/zero', read = (fd: number, memory: Uint8Array) => readZeros(fd, memory, 0, memory.length)) {
    this.#zeroPath = zeroPath
    this.#read = read
  }

  /** Zeroed memory of `bytes`, its pages given when its turn comes: see PagesAsked. */
  ask (bytes: number): PagesAsked {
    const asked = new PagesAsked(bytes)
    this.#waiting.push(asked)
    this.#next()
    return asked
  }

  /** Resolves once no read is under way or waiting (tests). */
  async settled (): Promise<void> {
    while (this.#reading) await this.#done
  }

  #next (): void {
    if (this.#reading) return
    let asked: PagesAsked | undefined
    do asked = this.#waiting.shift(); while (asked !== undefined && asked.dropped)
    if (asked === undefined) return
    const fd = zeroFile(this.#zeroPath)
    if (fd === -1) {
      this.#waiting.length = 0
      return
    }
    // Allocated only now: memory asked for and dropped before its turn never is. Zeroed, so what
    // a short or failed read leaves is zeros too (its pages then given on first write).
    let memory: ArrayBuffer
    try {
      memory = new ArrayBuffer(asked.bytes)
    } catch {
      // No memory for it now: none of those waiting gets any (each allocates when it needs it,
      // as without asking), and this is not thrown at an insert or left to reject unheard.
      asked.drop()
      for (const waiting of this.#waiting) waiting.drop()
      this.#waiting.length = 0
      return
    }
    this.#reading = true
    const ended = () => {
      this.#reading = false
      asked.ended(memory)
      this.#next()
    }
    this.#done = this.#read(fd, new Uint8Array(memory)).then(ended, ended)
  }
}

/** Memory asked of PagesInTurn: taken once its read has ended, or dropped. */
export class PagesAsked {
  readonly bytes: number
  #memory: ArrayBuffer | undefined
  #dropped = false

  constructor (bytes: number) {
    this.bytes = bytes
  }

  get dropped (): boolean {
    return this.#dropped
  }

  /** Whether its read has ended and it is not taken or dropped yet (tests). */
  get ready (): boolean {
    return this.#memory !== undefined
  }

  /**
   * The memory, all zeros, once its read has ended (the pool no longer writes to it); undefined
   * before, and after it was taken or dropped. The one who asked writes to it only after this.
   */
  take (): ArrayBuffer | undefined {
    const memory = this.#memory
    this.#memory = undefined
    this.#dropped = true
    return memory
  }

  /** Not wanted any more: not read into if its turn has not come, let go once its read has ended. */
  drop (): void {
    this.#dropped = true
    this.#memory = undefined
  }

  /** Called by PagesInTurn when the read into it has ended. */
  ended (memory: ArrayBuffer): void {
    if (!this.#dropped) this.#memory = memory
  }
}
