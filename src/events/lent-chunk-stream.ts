import { ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { BrotliCompress, Gzip } from 'node:zlib'
import { giveBackLentBuffer } from './answer-buffers.js'

/**
 * Whether a destination is done with a chunk's bytes when its write's callback runs: an HTTP
 * response once its socket has written them (or failed to, or was gone), a compressor once it has
 * compressed them. Not so for a stream that passes chunks on (a PassThrough, a Transform): its
 * callback runs while the chunk sits further down, so its chunks are not given back.
 */
export function isDoneWithChunksOnCallback (destination: NodeJS.WritableStream): boolean {
  return destination instanceof ServerResponse || destination instanceof Gzip || destination instanceof BrotliCompress
}

/**
 * A streamed answer: the chunks of an async iterator, whose buffers are lent
 * (answer-buffers.ts) and go back to their pool once the stream's destination is done with each.
 *
 * The buffers go back from its pipe: Readable's own pipe writes without a callback, so nothing
 * would tell when a chunk is done with. This one writes each chunk with one (to a destination
 * `givesBack` trusts: isDoneWithChunksOnCallback), and is called the way its two callers call a
 * pipe: Fastify's reply (`pipe(response)`, or `{ end: false }` when it sends trailers) and
 * stream.pipeline (`{ end: false }`, into a compressor). A chunk whose callback never runs is
 * simply collected.
 */
export class LentChunkStream extends Readable {
  readonly #chunks: AsyncIterator<Buffer>
  readonly #givesBack: (destination: NodeJS.WritableStream) => boolean
  #reading = false

  constructor (chunks: AsyncIterator<Buffer>, givesBack = isDoneWithChunksOnCallback) {
    // As Readable.from's: a chunk is made when the last one is taken, not read ahead.
    super({ highWaterMark: 1 })
    this.#chunks = chunks
    this.#givesBack = givesBack
  }

  override _read (): void {
    if (this.#reading) return
    this.#reading = true
    this.#chunks.next().then(({ done, value }) => {
      this.#reading = false
      // push() writes to the destination at once: what it throws ends this stream, not the process.
      try {
        if (done === true) this.push(null)
        else if (this.push(value)) this._read()
      } catch (error) {
        this.destroy(error as Error)
      }
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
    const givesBack = this.#givesBack(destination)
    const onData = (chunk: Buffer): void => {
      const more = givesBack ? destination.write(chunk, () => { giveBackLentBuffer(chunk) }) : destination.write(chunk)
      if (!more) {
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
    const gone = destination as unknown as { destroyed?: boolean, writableEnded?: boolean }
    if (gone.destroyed === true || gone.writableEnded === true) return destination
    destination.once('close', stop)
    destination.once('finish', stop)
    this.once('end', onEnd)
    this.on('data', onData)
    destination.emit('pipe', this)
    return destination
  }
}
