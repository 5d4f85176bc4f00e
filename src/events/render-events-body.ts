import type { Readable } from 'node:stream'
import { nextTurn, turnAfterHeldAnswers } from '../http/held-answers.js'
import type { ItemError } from '../../schemas/events.js'
import { isSynchronous, type EventBatch, type EventBatches } from '../store/event-store.js'
import { CHUNK_LIMIT } from './answer-buffers.js'
import type { DeflatedBlocks } from './deflated-blocks.js'
import { eventsEnvelope } from './events-envelope.js'
import { GzippedEventsStream, gzippedRest } from './gzipped-events-stream.js'
import { LentChunkStream } from './lent-chunk-stream.js'
import { MessageListWriter } from './message-list-writer.js'

/** Bodies up to this size go out whole, with a Content-Length; larger ones stream as they are read. */
const WHOLE_BODY_LIMIT = 256 * 1024

/** A store's batches, read synchronously or not (streamRest awaits either). */
type AnyIterator = Iterator<EventBatch> | AsyncIterator<EventBatch>

/** What had gone out when a streamed answer was cut. */
export interface CutAnswer {
  events: number
  bytes: number
}

export interface RenderOptions {
  /**
   * Called when the store fails after the answer has begun streaming: the status (200) and part
   * of the body are out, so the client only sees the chunked body stop without its end. Not
   * called when the client leaves.
   */
  onCut?: (error: unknown, sent: CutAnswer) => void
  /** Called once the whole answer is rendered (whole, or at the end of its stream), with its events. */
  onEnd?: (events: number) => void
  /**
   * The client takes gzip: an answer from a store that hands its batches over at once (the
   * memory store) that streams comes gzipped (a GzippedEventsStream), these kept blocks of the
   * store's events spliced in (gzipped-events-stream.ts). A whole answer is a Buffer as ever.
   */
  gzipBlocks?: DeflatedBlocks | undefined
}

/**
 * The events object, `{"data":[...],"errors":[...]}`, written as the store's batches arrive.
 * A small answer is returned whole; once it grows past WHOLE_BODY_LIMIT it is streamed, so a
 * large answer never sits whole in memory. While streaming, the event loop gets a turn between
 * chunks, so small requests are served while a large answer is being written.
 *
 * Batches a store hands over synchronously (the memory store's) are rendered without a promise
 * or a turn until the answer is known to stream: a small answer is a Buffer returned at once
 * (a promise per batch, and one turn per 32 KiB, were a tenth of a small answer's work and most
 * of a medium one's overhead). Asynchronous batches (InfluxDB's) give a turn every CHUNK_LIMIT.
 */
export function renderEventsBody (batches: EventBatches, errors: readonly ItemError[], options: RenderOptions = {}): Buffer | Readable | Promise<Buffer | Readable> {
  const { head, tail } = eventsEnvelope(errors)
  const writer = new MessageListWriter()
  writer.bytes(head)
  if (!isSynchronous(batches)) return renderArriving(batches[Symbol.asyncIterator](), writer, tail, options)
  const iterator = batches[Symbol.iterator]()
  let events = 0
  while (true) {
    const next = iterator.next()
    if (next.done === true) {
      writer.bytes(tail)
      options.onEnd?.(events)
      return writer.take()
    }
    const batch = next.value
    const { encoded } = batch
    const count = batch.messages.length
    for (let i = 0; i < count;) {
      if (encoded !== undefined) {
        const after = writer.encodedRun(encoded, i, count, events === 0, WHOLE_BODY_LIMIT)
        events += after - i
        i = after
      } else {
        if (events++ > 0) writer.comma()
        writer.message(batch.messages[i++]!)
      }
      // Checked per event: the work done before the first chunk goes out stays bounded.
      if (writer.length > WHOLE_BODY_LIMIT) {
        const rest = remainderFirst(batch, i, iterator)
        if (options.gzipBlocks === undefined) return streamOf(writer, rest, tail, events, options)
        return releasingOnClose(new GzippedEventsStream(gzippedRest(writer, rest, tail, events, options.gzipBlocks, options)), rest)
      }
    }
  }
}

/** The batches of an asynchronous store, with an event-loop turn every CHUNK_LIMIT of output. */
async function renderArriving (iterator: AsyncIterator<EventBatch>, writer: MessageListWriter, tail: Buffer, options: RenderOptions): Promise<Buffer | Readable> {
  let events = 0
  let sinceTurn = 0
  while (true) {
    // Give the event loop a turn once a good share of work was done since the last one; a small
    // answer never waits for one. Not yet paced as bulk work (nextTurn): this answer may still
    // be written whole, as other consumers' answers are.
    if (writer.length - sinceTurn >= CHUNK_LIMIT) {
      await turnAfterHeldAnswers()
      sinceTurn = writer.length
    }
    const next = await iterator.next()
    if (next.done === true) {
      writer.bytes(tail)
      options.onEnd?.(events)
      return writer.take()
    }
    const batch = next.value
    for (let i = 0; i < batch.messages.length; i++) {
      if (events++ > 0) writer.comma()
      writeEvent(writer, batch, i)
    }
    if (writer.length > WHOLE_BODY_LIMIT) return streamOf(writer, iterator, tail, events, options)
  }
}

/** What is left of a synchronous answer: the rest of the batch it stopped in, then the batches after it. */
function remainderFirst (batch: EventBatch, from: number, iterator: Iterator<EventBatch>): Iterator<EventBatch> {
  if (from === batch.messages.length) return iterator
  const { messages, encoded } = batch
  let rest: EventBatch | undefined = {
    messages: messages.slice(from),
    encoded: encoded === undefined ? undefined : { bytes: encoded.bytes, offsets: encoded.offsets, positions: encoded.positions.slice(from) }
  }
  return {
    next: () => {
      if (rest === undefined) return iterator.next()
      const value = rest
      rest = undefined
      return { done: false, value }
    },
    return: (value?: unknown) => iterator.return?.(value) ?? { done: true, value: undefined }
  }
}

function writeEvent (writer: MessageListWriter, batch: EventBatch, i: number): void {
  const encoded = batch.encoded
  if (encoded === undefined) writer.message(batch.messages[i]!)
  else {
    const position = encoded.positions[i]!
    writer.encoded(encoded.bytes, encoded.offsets[position]!, encoded.offsets[position + 1]!)
  }
}

function streamOf (writer: MessageListWriter, iterator: AnyIterator, tail: Buffer, events: number, options: RenderOptions): Readable {
  return releasingOnClose(new LentChunkStream(streamRest(writer, iterator, tail, events, options)), iterator)
}

/** The stream, releasing the store's query when it closes. */
function releasingOnClose<T extends Readable> (stream: T, iterator: AnyIterator): T {
  // A stream destroyed before its first read (the client left while the first batches were
  // read) ends streamRest before it starts, so its finally never runs: release the store's
  // query here too. After a finished answer this is a no-op; a failure to release has no one
  // left to tell.
  stream.once('close', () => {
    Promise.resolve().then(() => iterator.return?.()).catch(() => {})
  })
  return stream
}

async function * streamRest (writer: MessageListWriter, iterator: AnyIterator, tail: Buffer, eventsBefore: number, options: RenderOptions): AsyncGenerator<Buffer> {
  // What was handed to the stream, so what had gone out (or was on its way) when it was cut.
  let events = eventsBefore
  let handedEvents = 0
  let bytes = 0
  const hand = (chunk: Buffer) => {
    bytes += chunk.length
    handedEvents = events
    return chunk
  }
  try {
    yield hand(writer.take())
    while (true) {
      let next: IteratorResult<EventBatch>
      try {
        next = await iterator.next()
      } catch (error) {
        options.onCut?.(error, { events: handedEvents, bytes })
        throw error
      }
      if (next.done === true) break
      const batch = next.value
      const { encoded } = batch
      const count = batch.messages.length
      for (let i = 0; i < count;) {
        if (encoded !== undefined) {
          const after = writer.encodedRun(encoded, i, count, false, CHUNK_LIMIT - 1)
          events += after - i
          i = after
        } else {
          writer.comma()
          writer.message(batch.messages[i++]!)
          events++
        }
        if (writer.length >= CHUNK_LIMIT) {
          yield hand(writer.take())
          // One chunk per event-loop turn: a request waiting behind a large answer waits for
          // one chunk's work at most, and the answers held to the end of their batch go out
          // before it.
          await nextTurn()
        }
      }
    }
    writer.bytes(tail)
    options.onEnd?.(events)
    yield writer.take()
  } finally {
    // The client went away or the store failed: let the store release its query.
    await iterator.return?.()
  }
}
