import type { EventQuery } from '../event-store.js'

/**
 * Whether InfluxDB must read every series of the window to answer: no device, space or code
 * narrows it (tags do; message_id is a field, read point by point). Such a scan costs InfluxDB
 * CPU in proportion to the window, however few events it finally returns.
 */
export function isScan (query: EventQuery): boolean {
  return query.entities === undefined && query.messageCodes === undefined
}

/**
 * Lets at most `limit` scans run on InfluxDB at once; the others wait their turn, first come
 * first served. Measured on one InfluxDB core: two scans side by side finish no sooner than one
 * after the other, but they leave every narrow query (one device's month) waiting behind them
 * several times longer. Narrow queries never wait here.
 */
export class ScanGate {
  readonly #limit: number
  #running = 0
  readonly #waiting: Array<() => void> = []

  constructor (limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a scan gate needs a limit of at least 1, not ${limit}`)
    this.#limit = limit
  }

  /** Scans running now, and waiting for their turn. */
  get load (): { running: number, waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length }
  }

  /** Iterates `source()` once a turn is free, and frees the turn when the iteration ends however it ends. */
  async * pass<T> (source: () => AsyncIterable<T>): AsyncGenerator<T> {
    await this.#enter()
    try {
      yield * source()
    } finally {
      this.#leave()
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
