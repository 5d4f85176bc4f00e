import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import fastJson from 'fast-json-stringify'
import { ItemError } from '../../schemas/events.js'
import type { ItemError as ItemErrorType } from '../../schemas/events.js'
import type { Message } from '../../schemas/message.js'
import { messageJson } from './message-json.js'

const serializeErrors = fastJson({ type: 'array', items: ItemError })

/** Bodies up to this size go out whole, with a Content-Length; larger ones stream as they are read. */
const WHOLE_BODY_LIMIT = 256 * 1024

/**
 * Streamed chunks stay below V8's large-object size, so they live and die in the young
 * generation instead of piling up until a full collection (RSS stays flat during large answers).
 */
const CHUNK_LIMIT = 64 * 1024

/**
 * The events object, `{"data":[...],"errors":[...]}`, written as the store's batches arrive.
 * A small answer is returned as one string; once it grows past WHOLE_BODY_LIMIT the rest is
 * streamed, so a large answer never sits whole in memory. Between batches the event loop gets a
 * turn, so small requests are served while a large answer is being written.
 */
export async function renderEventsBody (batches: AsyncIterable<Message[]>, errors: readonly ItemErrorType[]): Promise<string | Readable> {
  const tail = '],"errors":' + serializeErrors(errors as ItemErrorType[]) + '}'
  const iterator = batches[Symbol.asyncIterator]()
  let head = '{"data":['
  let first = true
  for (let turn = 0; ; turn++) {
    if (turn > 0) await nextTurn()
    const next = await iterator.next()
    if (next.done === true) return head + tail
    for (const message of next.value) {
      head += first ? messageJson(message) : ',' + messageJson(message)
      first = false
    }
    if (head.length > WHOLE_BODY_LIMIT) return Readable.from(streamRest(head, iterator, tail), { objectMode: false })
  }
}

async function * streamRest (head: string, iterator: AsyncIterator<Message[]>, tail: string): AsyncGenerator<string> {
  try {
    yield head
    let chunk = ''
    while (true) {
      await nextTurn()
      const next = await iterator.next()
      if (next.done === true) break
      for (const message of next.value) {
        chunk += ',' + messageJson(message)
        if (chunk.length >= CHUNK_LIMIT) {
          yield chunk
          chunk = ''
        }
      }
    }
    yield chunk + tail
  } finally {
    // The client went away or the store failed: let the store release its query.
    await iterator.return?.()
  }
}
