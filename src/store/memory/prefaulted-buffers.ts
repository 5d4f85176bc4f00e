import { openSync, read } from 'node:fs'

/**
 * Buffers for the memory store's growth whose pages the kernel has already given, on a thread of
 * libuv's pool rather than on the event loop.
 *
 * Why: an ingest's events are copied into new memory (MemorySegment's rooms), which the kernel
 * gives page by page on first write, and in a virtual machine a page the guest never wrote before
 * is given slowly. Under the benchmark's memory ingest that was a third of the main thread's time
 * in the later rounds: 0.7 to 1.1 µs of system time an event beside 1.7 to 1.8 µs of its own,
 * with 0.06 to 0.11 page faults an event (BENCHMARKS.md, "What profiling found"). So one buffer
 * is kept ready: while the store fills a room, a read of /dev/zero into the next one (the kernel
 * writes its pages, as the events' bytes would) runs on the thread pool.
 *
 * The event loop never touches a buffer while its read is on its way: it takes only a buffer
 * whose read has ended, and allocates as before when there is none (the first room, a room asked
 * for before the read ended, a larger one, no /dev/zero). What it costs: the ready buffer, about
 * the size of the last room asked for, stays allocated (and its pages given) until the next room
 * takes it; /dev/zero stays open.
 */
export class PrefaultedBuffers {
  readonly #zeroFile: string
  /** Of the zero file, opened on first use; -1 when it cannot be: plain allocation then. */
  #zero: number | undefined
  #ready: Buffer | undefined
  #reading = false

  /** `zeroFile`: what is read into a buffer to make the kernel give its pages (tests give another). */
  constructor (zeroFile = '/dev/zero') {
    this.#zeroFile = zeroFile
  }

  /**
   * A buffer of at least `bytes`, its contents undefined (as Buffer.allocUnsafe's), of which the
   * first `expectedBytes` are likely to be written; the next one is made ready for a call like this.
   */
  take (bytes: number, expectedBytes: number): Buffer {
    const ready = this.#ready
    this.#ready = undefined
    // A ready buffer much larger than asked for is not used: its pages would be held for nothing.
    const buffer = ready !== undefined && ready.length >= bytes && ready.length <= 2 * bytes ? ready : Buffer.allocUnsafeSlow(bytes)
    // A quarter more than asked: the next room's estimate differs a little from this one's, and
    // the pages beyond the expected bytes are not given, so they cost no memory.
    this.#prepare(Math.ceil(1.25 * bytes), Math.min(bytes, expectedBytes))
    return buffer
  }

  /** Whether a buffer is ready (its read ended), for tests. */
  get hasReady (): boolean {
    return this.#ready !== undefined
  }

  /** The next buffer, of `bytes`, its first `faultBytes` read into on the thread pool. */
  #prepare (bytes: number, faultBytes: number): void {
    if (this.#reading) return
    const zero = this.#zero ??= this.#openZero()
    if (zero === -1) return
    const buffer = Buffer.allocUnsafeSlow(bytes)
    this.#reading = true
    // A short read or a failed one leaves pages to be given on first write, as without it.
    read(zero, buffer, 0, faultBytes, 0, () => {
      this.#reading = false
      this.#ready = buffer
    })
  }

  #openZero (): number {
    try {
      return openSync(this.#zeroFile, 'r')
    } catch {
      return -1
    }
  }
}
