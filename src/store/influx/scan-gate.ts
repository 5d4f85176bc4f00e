import type { EventQuery } from '../event-store.js'

/**
 * Whether InfluxDB must read every series of the window to answer: no device, space, code or
 * message_id narrows it (tags do, and message_ids go to the index). Such a scan costs InfluxDB
 * CPU in proportion to the window, however few events it finally returns.
 */
export function isScan (query: EventQuery): boolean {
  return query.entities === undefined && query.messageCodes === undefined && query.messageIds === undefined
}

/** How long a scan's reader may hold a batch before the scan gives its turn back. */
export const SCAN_HOLD_LIMIT_MS = 2000

/**
 * Lets at most `limit` scans run on InfluxDB at once; the others wait their turn, first come
 * first served. Measured on one InfluxDB core: two scans side by side finish no sooner than one
 * after the other, but they leave every narrow query (one device's month) waiting behind them
 * several times longer. Narrow queries never wait here.
 */
export class ScanGate {
  readonly #limit: number
  readonly #holdLimitMs: number
  #running = 0
  readonly #waiting: Array<() => void> = []

  /**
   * holdLimitMs: a scan whose reader keeps a batch longer than this gives its turn back. A turn
   * exists to ration InfluxDB's CPU, and a scan waiting on a slow client (one reading 16 KB/s)
   * costs InfluxDB none: its query sits blocked on a full connection. It goes on without a turn,
   * at its reader's pace, holding no more memory than before (the answer is still read a batch
   * at a time), while the next scan runs.
   */
  constructor (limit: number, holdLimitMs = SCAN_HOLD_LIMIT_MS) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a scan gate needs a limit of at least 1, not ${limit}`)
    this.#limit = limit
    this.#holdLimitMs = holdLimitMs
  }

  /** Scans running now, and waiting for their turn. */
  get load (): { running: number, waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length }
  }

  /**
   * Iterates `source()` once a turn is free, and frees the turn when the iteration ends however it
   * ends, or earlier when its reader holds one value longer than the hold limit.
   */
  async * pass<T> (source: () => AsyncIterable<T>): AsyncGenerator<T> {
    await this.#enter()
    let holding = true
    const giveBack = () => {
      if (!holding) return
      holding = false
      this.#leave()
    }
    let timer: NodeJS.Timeout | undefined
    try {
      for await (const value of source()) {
        if (holding) timer = setTimeout(giveBack, this.#holdLimitMs)
        yield value
        clearTimeout(timer)
      }
    } finally {
      clearTimeout(timer)
      giveBack()
    }
  }

  async #enter (): Promise<void> {
    if (this.#running < this.#limit) {
      this.#running++
      return
    }
    // The leaving scan hands its turn over: #running stays as it is.
    await new Promise<void>((resolve) => this.#waiting.push(resolve))
  }

  #leave (): void {
    const next = this.#waiting.shift()
    if (next !== undefined) next()
    else this.#running--
  }
}
