import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import fastJson from 'fast-json-stringify'
import { ItemError } from '../../schemas/events.js'
import type { ItemError as ItemErrorType } from '../../schemas/events.js'
import type { Message } from '../../schemas/message.js'
import { MessageListWriter } from './message-json.js'

const serializeErrors = fastJson({ type: 'array', items: ItemError })

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
export async function renderEventsBody (batches: AsyncIterable<Message[]>, errors: readonly ItemErrorType[]): Promise<Buffer | Readable> {
  const tail = '],"errors":' + serializeErrors(errors as ItemErrorType[]) + '}'
  const iterator = batches[Symbol.asyncIterator]()
  const writer = new MessageListWriter()
  writer.text('{"data":[')
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
    for (const message of next.value) {
      if (first) first = false
      else writer.comma()
      writer.message(message)
    }
    if (writer.length > WHOLE_BODY_LIMIT) return streamOf(writer, iterator, tail)
  }
}

function streamOf (writer: MessageListWriter, iterator: AsyncIterator<Message[]>, tail: string): Readable {
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

async function * streamRest (writer: MessageListWriter, iterator: AsyncIterator<Message[]>, tail: string): AsyncGenerator<Buffer> {
  try {
    yield writer.take()
    while (true) {
      const next = await iterator.next()
      if (next.done === true) break
      for (const message of next.value) {
        writer.comma()
        writer.message(message)
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
