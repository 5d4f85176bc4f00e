import { Readable } from 'node:stream'
import fastJson from 'fast-json-stringify'
import { ItemError } from '../../schemas/events.js'
import { Message } from '../../schemas/message.js'
import type { Message as MessageType } from '../../schemas/message.js'
import type { ItemError as ItemErrorType } from '../../schemas/events.js'

const serializeMessage = fastJson(Message)
const serializeErrors = fastJson({ type: 'array', items: ItemError })

/** Bodies up to this size go out whole, with a Content-Length; larger ones stream as they are read. */
const WHOLE_BODY_LIMIT = 256 * 1024

/**
 * The events object, `{"data":[...],"errors":[...]}`, written as the store's batches arrive.
 * A small answer is returned as one string; once it grows past WHOLE_BODY_LIMIT the rest is
 * streamed, so a large answer never sits whole in memory.
 */
export async function renderEventsBody (batches: AsyncIterable<MessageType[]>, errors: readonly ItemErrorType[]): Promise<string | Readable> {
  const tail = '],"errors":' + serializeErrors(errors as ItemErrorType[]) + '}'
  const iterator = batches[Symbol.asyncIterator]()
  let head = '{"data":['
  let first = true
  while (true) {
    const next = await iterator.next()
    if (next.done === true) return head + tail
    for (const message of next.value) {
      head += first ? serializeMessage(message) : ',' + serializeMessage(message)
      first = false
    }
    if (head.length > WHOLE_BODY_LIMIT) return Readable.from(streamRest(head, iterator, tail), { objectMode: false })
  }
}

async function * streamRest (head: string, iterator: AsyncIterator<MessageType[]>, tail: string): AsyncGenerator<string> {
  try {
    yield head
    while (true) {
      const next = await iterator.next()
      if (next.done === true) break
      let chunk = ''
      for (const message of next.value) chunk += ',' + serializeMessage(message)
      yield chunk
    }
    yield tail
  } finally {
    // The client went away or the store failed: let the store release its query.
    await iterator.return?.()
  }
}
