import { createWriteStream, type WriteStream } from 'node:fs'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'

/**
 * Writes text to a file chunk by chunk, waiting whenever the stream's buffer is full, so a
 * producer faster than the disk never piles its output up in memory.
 */
export class ChunkWriter {
  readonly #stream: WriteStream
  readonly #finished: Promise<void>
  #error: Error | undefined

  constructor (file: string) {
    this.#stream = createWriteStream(file, { encoding: 'utf8' })
    // Also listens for 'error', so a failure between writes is kept for the next call, not thrown unhandled.
    this.#finished = finished(this.#stream)
    this.#finished.catch((error: Error) => { this.#error = error })
  }

  async write (chunk: string): Promise<void> {
    if (this.#error !== undefined) throw this.#error
    if (!this.#stream.write(chunk)) await once(this.#stream, 'drain')
  }

  async close (): Promise<void> {
    this.#stream.end()
    await this.#finished
  }
}
