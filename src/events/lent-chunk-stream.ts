import { Readable } from 'node:stream'
import { giveBackAnswerBuffer } from './answer-buffers.js'

/**
 * A streamed answer: the chunks of an async iterator, whose buffers are lent
 * (answer-buffers.ts) and go back to their pool once the stream's destination has written each.
 *
 * The buffers go back from its pipe: Readable's own pipe writes without a callback, so nothing
 * would tell when a chunk is done with. This one writes each chunk with one, and is called the
 * way its two callers call a pipe: Fastify's reply (`pipe(response)`, or `{ end: false }` when
 * it sends trailers) and stream.pipeline (`{ end: false }`, into a compressing stream). A
 * write's callback runs once the destination is done with the bytes: an HTTP response once the
 * socket has written them (or failed to, or was gone), a zlib stream once it has compressed them.
 * A chunk whose callback never runs is simply collected.
 */
export class LentChunkStream extends Readable {
  readonly #chunks: AsyncIterator<Buffer>
  #reading = false

  constructor (chunks: AsyncIterator<Buffer>) {
    // As Readable.from's: a chunk is made when the last one is taken, not read ahead.
    super({ highWaterMark: 1 })
    this.#chunks = chunks
  }

  override _read (): void {
    if (this.#reading) return
    this.#reading = true
    this.#chunks.next().then(({ done, value }) => {
      this.#reading = false
      if (done === true) this.push(null)
      else if (this.push(value)) this._read()
    }, (error: unknown) => {
      this.#reading = false
      this.destroy(error as Error)
    })
  }

  override _destroy (error: Error | null, callback: (error?: Error | null) => void): void {
    // Ends the iterator's work (its finally releases the store's query) whatever the reason.
    Promise.resolve(this.#chunks.return?.()).then(() => callback(error), (returned: unknown) => callback(error ?? returned as Error))
  }

  override pipe<T extends NodeJS.WritableStream> (destination: T, options?: { end?: boolean }): T {
    const onData = (chunk: Buffer): void => {
      if (!destination.write(chunk, () => { giveBackAnswerBuffer(chunk) })) {
        this.pause()
        destination.once('drain', onDrain)
      }
    }
    const onDrain = (): void => { this.resume() }
    const onEnd = (): void => {
      stop()
      if (options?.end !== false) destination.end()
    }
    // The destination finished or closed (the client left): nothing more goes to it.
    const stop = (): void => {
      this.off('data', onData)
      this.off('end', onEnd)
      destination.removeListener('drain', onDrain)
      destination.removeListener('close', stop)
      destination.removeListener('finish', stop)
    }
    destination.once('close', stop)
    destination.once('finish', stop)
    this.once('end', onEnd)
    this.on('data', onData)
    destination.emit('pipe', this)
    return destination
  }
}
