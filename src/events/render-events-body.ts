import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { ItemError } from '../../schemas/events.js'
import type { EventBatch } from '../store/event-store.js'
import { eventsEnvelope } from './events-envelope.js'
import { MessageListWriter } from './message-list-writer.js'

/** Bodies up to this size go out whole, with a Content-Length; larger ones stream as they are read. */
const WHOLE_BODY_LIMIT = 256 * 1024

/**
 * Streamed chunks stay small, so each lives and dies young instead of piling up until a full
 * collection: RSS stays flat while large answers are written.
 */
const CHUNK_LIMIT = 32 * 1024

/**
 * The events object, `{"data":[...],"errors":[...]}`, written as the store's batches arrive.
 * A small answer is returned whole; once it grows past WHOLE_BODY_LIMIT it is streamed, so a
 * large answer never sits whole in memory. Between batches the event loop gets a turn, so small
 * requests are served while a large answer is being written.
 */
export async function renderEventsBody (batches: AsyncIterable<EventBatch>, errors: readonly ItemError[]): Promise<Buffer | Readable> {
  const { head, tail } = eventsEnvelope(errors)
  const iterator = batches[Symbol.asyncIterator]()
  const writer = new MessageListWriter()
  writer.text(head)
  let first = true
  let sinceTurn = 0
  while (true) {
    // Give the event loop a turn once a good share of work was done since the last one; a small
    // answer never waits for one.
    if (writer.length - sinceTurn >= CHUNK_LIMIT) {
      await nextTurn()
      sinceTurn = writer.length
    }
    const next = await iterator.next()
    if (next.done === true) {
      writer.text(tail)
      return writer.take()
    }
    const batch = next.value
    for (let i = 0; i < batch.messages.length; i++) {
      if (first) first = false
      else writer.comma()
      writeEvent(writer, batch, i)
    }
    if (writer.length > WHOLE_BODY_LIMIT) return streamOf(writer, iterator, tail)
  }
}

function writeEvent (writer: MessageListWriter, batch: EventBatch, i: number): void {
  const encoded = batch.encoded
  if (encoded === undefined) writer.message(batch.messages[i]!)
  else writer.encoded(encoded.buffers[i]!, encoded.starts[i]!, encoded.ends[i]!)
}

function streamOf (writer: MessageListWriter, iterator: AsyncIterator<EventBatch>, tail: string): Readable {
  const stream = Readable.from(streamRest(writer, iterator, tail), { objectMode: false })
  // A stream destroyed before its first read (the client left while the first batches were
  // read) ends streamRest before it starts, so its finally never runs: release the store's
  // query here too. After a finished answer this is a no-op; a failure to release has no one
  // left to tell.
  stream.once('close', () => {
    iterator.return?.().catch(() => {})
  })
  return stream
}

async function * streamRest (writer: MessageListWriter, iterator: AsyncIterator<EventBatch>, tail: string): AsyncGenerator<Buffer> {
  try {
    yield writer.take()
    while (true) {
      const next = await iterator.next()
      if (next.done === true) break
      const batch = next.value
      for (let i = 0; i < batch.messages.length; i++) {
        writer.comma()
        writeEvent(writer, batch, i)
        if (writer.length >= CHUNK_LIMIT) {
          yield writer.take()
          // One chunk per event-loop turn: a request waiting behind a large answer waits for
          // one chunk's work at most.
          await nextTurn()
        }
      }
    }
    writer.text(tail)
    yield writer.take()
  } finally {
    // The client went away or the store failed: let the store release its query.
    await iterator.return?.()
  }
}
