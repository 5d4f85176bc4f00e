import { nextTurn } from '../http/held-answers.js'
import { GzipSplicer } from '../http/gzip-splicer.js'
import type { EventBatch } from '../store/event-store.js'
import { CHUNK_LIMIT, giveBackLentBuffer } from './answer-buffers.js'
import type { DeflatedBlocks } from './deflated-blocks.js'
import { LentChunkStream } from './lent-chunk-stream.js'
import type { MessageListWriter } from './message-list-writer.js'
import type { RenderOptions } from './render-events-body.js'

/**
 * A streamed events answer already gzipped (Content-Encoding gzip): sent as it is, not through a
 * compressor. Its chunks are zlib's output and kept blocks, none of them lent.
 */
export class GzippedEventsStream extends LentChunkStream {
  constructor (chunks: AsyncIterator<Buffer>) {
    super(chunks, () => false)
  }
}

/** Events of one encoded buffer, one after the other from a block's first: the block in the making. */
interface HeldRun {
  readonly bytes: Buffer
  readonly offsets: Uint32Array
  readonly from: number
  next: number
}

/**
 * The rest of a streamed answer (after what `writer` holds: its head and first events), then
 * `tail`, gzipped: every whole block of the memory store's events the answer holds in a row
 * (DeflatedBlocks) is sent as kept, deflated once; the rest is compressed as it goes. The same
 * bytes, once decompressed, as the plain answer (render-events-body.ts's streamRest), with the
 * same turns: one chunk's work, or one block, per event-loop turn.
 *
 * A block's events are held (their positions only) until the block is whole; when the run
 * breaks first (another buffer, a gap: a filter, a segment's end, the answer's end) they are
 * written as any others.
 */
export async function * gzippedRest (writer: MessageListWriter, iterator: Iterator<EventBatch>, tail: Buffer, eventsBefore: number, blocks: DeflatedBlocks, options: RenderOptions): AsyncGenerator<Buffer> {
  const gzip = new GzipSplicer()
  const blockEvents = blocks.blockEvents
  let events = eventsBefore
  let handedEvents = eventsBefore
  let bytes = 0
  let held: HeldRun | undefined

  /** What the writer holds, compressed; its buffer back to its pool once zlib has it. */
  async function * compressWritten (): AsyncGenerator<Buffer> {
    const text = writer.take()
    bytes += text.length
    handedEvents = events
    await gzip.text(text)
    giveBackLentBuffer(text)
    yield * gzip.take()
  }

  /** The held events, written as any others: their run broke before the block was whole, or the block is neither kept nor to be made now. */
  async function * writeHeld (run: HeldRun): AsyncGenerator<Buffer> {
    held = undefined
    for (let position = run.from; position < run.next; position++) {
      writer.comma()
      writer.encoded(run.bytes, run.offsets[position]!, run.offsets[position + 1]!)
      events++
      if (writer.length >= CHUNK_LIMIT) {
        yield * compressWritten()
        await nextTurn()
      }
    }
  }

  try {
    yield * compressWritten()
    while (true) {
      let next: IteratorResult<EventBatch>
      try {
        next = iterator.next()
      } catch (error) {
        options.onCut?.(error, { events: handedEvents, bytes })
        throw error
      }
      if (next.done === true) break
      const { messages, encoded } = next.value
      for (let i = 0; i < messages.length; i++) {
        if (encoded === undefined) {
          if (held !== undefined) yield * writeHeld(held)
          writer.comma()
          writer.message(messages[i]!)
          events++
        } else {
          const position = encoded.positions[i]!
          const { bytes: buffer, offsets } = encoded
          if (held !== undefined && held.bytes === buffer && held.offsets === offsets && held.next === position) {
            if (++held.next - held.from < blockEvents) continue
            const run = held
            const number = run.from / blockEvents
            const piece = blocks.block(run.bytes, run.offsets, number)
            // Neither kept nor to be made now: compressed as it goes.
            if (piece === undefined) {
              yield * writeHeld(run)
              continue
            }
            held = undefined
            // The next block meanwhile, on another of libuv's threads, when the buffer holds it
            // whole: an answer that holds a block mostly holds the next. A cold large answer
            // 0.70 -> 0.51 s (BENCHMARKS.md, "Compression").
            if ((number + 2) * blockEvents < run.offsets.length) blocks.block(run.bytes, run.offsets, number + 1)?.catch(() => {})
            // A whole block: what was written before it goes first.
            if (writer.length > 0) yield * compressWritten()
            const made = await piece
            await gzip.piece(made)
            events += blockEvents
            handedEvents = events
            bytes += made.length
            yield * gzip.take()
            await nextTurn()
            continue
          }
          if (held !== undefined) yield * writeHeld(held)
          if (position % blockEvents === 0) {
            held = { bytes: buffer, offsets, from: position, next: position + 1 }
            continue
          }
          writer.comma()
          writer.encoded(buffer, offsets[position]!, offsets[position + 1]!)
          events++
        }
        if (writer.length >= CHUNK_LIMIT) {
          yield * compressWritten()
          // One chunk per event-loop turn, as a plain answer's.
          await nextTurn()
        }
      }
    }
    if (held !== undefined) yield * writeHeld(held)
    writer.bytes(tail)
    yield * compressWritten()
    options.onEnd?.(events)
    await gzip.end()
    yield * gzip.take()
  } finally {
    gzip.destroy()
    // The client went away or the store failed: let the store release its query.
    iterator.return?.()
  }
}
