import t from 'tap'
import { once } from 'node:events'
import { Readable } from 'node:stream'
import { gunzipSync } from 'node:zlib'
import type { Message } from '../schemas/message.js'
import type { EventBatch } from '../src/store/event-store.js'
import type { FastifyReply } from 'fastify'
import { holdAnswer } from '../src/http/held-answers.js'
import { renderEventsBody } from '../src/events/render-events-body.js'
import { MessageListWriter } from '../src/events/message-list-writer.js'
import { DeflatedBlocks } from '../src/events/deflated-blocks.js'
import { GzippedEventsStream } from '../src/events/gzipped-events-stream.js'
import { encodeMessage, encodeMessageList } from '../src/store/message-json.js'

const message = (i: number): Message => ({
  message_id: `m-${String(i).padStart(7, '0')}`,
  message_code: 'EMPTY',
  message_category: 'alert',
  date_time: '2026-01-01T00:00:00.000Z',
  device_id: 'd-1',
  space_id: 's-1'
})

/**
 * A store's batches of 1,000 events, recording whether its query was released (its finally ran):
 * synchronous, as the memory store answers, or asynchronous, as InfluxDB does.
 */
function storeOf (batches: number) {
  const state = { released: false, batchesRead: 0 }
  function * source (): Generator<EventBatch> {
    try {
      for (let b = 0; b < batches; b++) {
        state.batchesRead++
        yield { messages: Array.from({ length: 1000 }, (_, i) => message(b * 1000 + i)) }
      }
    } finally {
      state.released = true
    }
  }
  return { state, source }
}

/** An asynchronous store (its generator's return reaches the synchronous one's finally). */
function store (batches: number) {
  const { state, source } = storeOf(batches)
  async function * arriving (): AsyncGenerator<EventBatch> { yield * source() }
  return { state, batches: arriving() }
}

t.test('a small answer is one buffer, and its query is finished', async (t) => {
  const { state, batches } = store(1)
  const body = await renderEventsBody(batches, [])
  t.ok(Buffer.isBuffer(body))
  t.equal(JSON.parse(body.toString()).data.length, 1000)
  t.equal(state.released, true)
})

t.test('a large answer streams every event, then releases the query', async (t) => {
  const { state, batches } = store(20)
  const body = await renderEventsBody(batches, [])
  t.ok(body instanceof Readable, 'streamed')
  const chunks: Buffer[] = []
  for await (const chunk of body as Readable) chunks.push(chunk as Buffer)
  const parsed = JSON.parse(Buffer.concat(chunks).toString())
  t.equal(parsed.data.length, 20_000)
  t.same(parsed.errors, [])
  t.equal(state.released, true)
})

t.test('a large answer dropped before its first read still releases the query', async (t) => {
  // The client went away while the first batches were read: the stream is destroyed unread.
  const { state, batches } = store(20)
  const body = await renderEventsBody(batches, []) as Readable
  t.equal(state.released, false, 'still open while the answer is pending')
  body.destroy()
  await once(body, 'close')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(state.released, true, 'the store query is released')
  t.ok(state.batchesRead < 20, 'and not read to its end')
})

t.test('a large answer dropped halfway releases the query', async (t) => {
  const { state, batches } = store(20)
  const body = await renderEventsBody(batches, []) as Readable
  const reader = body[Symbol.asyncIterator]()
  t.equal((await reader.next()).done, false, 'a first chunk is read')
  await reader.return?.()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(state.released, true)
  t.ok(state.batchesRead < 20)
})

t.test('an asynchronous store\'s answer is paced as bulk work only once it streams', async (t) => {
  // Another consumer's answer held before each batch, as a steady stream of small requests
  // does: the pace is on at every turn the render takes (held-answers.ts, bulkWorkPaced).
  async function * busy (batches: number, size: number): AsyncGenerator<EventBatch> {
    for (let b = 0; b < batches; b++) {
      holdAnswer({ statusCode: 200 } as unknown as FastifyReply, Buffer.from('small'), () => {})
      yield { messages: Array.from({ length: size }, (_, i) => message(b * size + i)) }
    }
  }
  // The pace is a timer of PACE_MS (2 ms): count the timers of that length set meanwhile.
  const paces = async (render: () => Promise<unknown>): Promise<number> => {
    const setTimer = globalThis.setTimeout
    let count = 0
    globalThis.setTimeout = ((callback: () => void, ms?: number) => {
      if (ms === 2) count++
      return setTimer(callback, ms)
    }) as typeof setTimeout
    try {
      await render()
    } finally {
      globalThis.setTimeout = setTimer
    }
    return count
  }
  // Five batches of 300 events (some 43 KB each): four turns, the answer still whole (< 256 KiB).
  let whole: unknown
  t.equal(await paces(async () => { whole = await renderEventsBody(busy(5, 300), []) }), 0, 'a whole answer is never paced, however busy the provider')
  t.ok(Buffer.isBuffer(whole), 'it was whole')
  t.equal(JSON.parse((whole as Buffer).toString()).data.length, 1500)
  const streamedPaces = await paces(async () => {
    const body = await renderEventsBody(busy(20, 1000), [])
    t.ok(body instanceof Readable, 'streamed')
    let events = 0
    for await (const chunk of body as Readable) events += (chunk as Buffer).toString().split('"message_id"').length - 1
    t.equal(events, 20_000)
  })
  t.ok(streamedPaces > 0, 'a streamed answer\'s chunks are paced while others are served')
  await new Promise((resolve) => setTimeout(resolve, 20))
})

t.test('a store failing mid-stream is reported once with what had been handed out; a client leaving is not', async (t) => {
  async function * failing (): AsyncGenerator<EventBatch> {
    for (let b = 0; b < 5; b++) yield { messages: Array.from({ length: 1000 }, (_, i) => message(b * 1000 + i)) }
    throw new Error('the store broke')
  }
  const cuts: Array<[string, { events: number, bytes: number }]> = []
  const body = await renderEventsBody(failing(), [], { onCut: (error, sent) => cuts.push([(error as Error).message, sent]) }) as Readable
  const chunks: Buffer[] = []
  await t.rejects((async () => { for await (const chunk of body) chunks.push(chunk as Buffer) })(), { message: 'the store broke' })
  t.equal(cuts.length, 1)
  t.equal(cuts[0]![0], 'the store broke')
  t.equal(cuts[0]![1].events, Buffer.concat(chunks).toString().split('"message_id"').length - 1, 'the events handed to the client')
  t.equal(cuts[0]![1].bytes, Buffer.concat(chunks).length, 'the bytes handed to the client')

  const left: unknown[] = []
  const { batches } = store(20)
  const leaving = await renderEventsBody(batches, [], { onCut: (error) => left.push(error) }) as Readable
  const reader = leaving[Symbol.asyncIterator]()
  await reader.next()
  await reader.return?.()
  t.same(left, [], 'a client that leaves is not a cut answer')
})

/** The same store, answering synchronously (as the memory store does). */
function syncStore (batches: number) {
  const { state, source } = storeOf(batches)
  return { state, batches: { [Symbol.iterator]: () => source() } }
}

t.test('a synchronous store\'s small answer is a buffer at once, without a promise', async (t) => {
  const { state, batches } = syncStore(1)
  const body = renderEventsBody(batches, [])
  t.ok(Buffer.isBuffer(body), 'not a promise')
  t.equal(JSON.parse((body as Buffer).toString()).data.length, 1000)
  t.equal(state.released, true)
})

t.test('a synchronous store\'s large answer streams from the event where it passed the size, every event once, in order', async (t) => {
  const { state, batches } = syncStore(7)
  const itemError = { id: 'x', item_type: 'device' as const, message: 'invalid_device' as const }
  const body = renderEventsBody(batches, [itemError])
  t.ok(body instanceof Readable, 'streamed')
  const chunks: Buffer[] = []
  for await (const chunk of body as Readable) chunks.push(chunk as Buffer)
  const parsed = JSON.parse(Buffer.concat(chunks).toString())
  t.same(parsed.data.map((m: Message) => m.message_id), Array.from({ length: 7000 }, (_, i) => message(i).message_id))
  t.same(parsed.errors, [itemError])
  t.equal(state.released, true)
})

t.test('a synchronous store\'s large answer dropped unread releases the query', async (t) => {
  const { state, batches } = syncStore(20)
  const body = renderEventsBody(batches, []) as Readable
  body.destroy()
  await once(body, 'close')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(state.released, true)
  t.ok(state.batchesRead < 20)
})

/**
 * A synchronous store handing its events over encoded, as the memory store does: every other
 * stored event is answered (positions that skip), as a list or as a view of an index.
 */
function encodedStore (batches: number, positionsAs: 'list' | 'view') {
  const stored = Array.from({ length: batches * 2000 }, (_, i) => message(i))
  const { bytes, offsets } = encodeMessageList(stored)
  const answered: Message[] = []
  function * source (): Generator<EventBatch> {
    for (let b = 0; b < batches; b++) {
      const list = Array.from({ length: 1000 }, (_, i) => 2 * (b * 1000 + i) + 1)
      const messages = list.map((position) => stored[position]!)
      answered.push(...messages)
      yield { messages, encoded: { bytes, offsets, positions: positionsAs === 'list' ? list : Uint32Array.from(list) } }
    }
  }
  return { answered, batches: source() }
}

for (const positionsAs of ['list', 'view'] as const) {
  t.test(`encoded batches (positions as a ${positionsAs}) are written with their commas, whole or streamed from the event that passed the size`, async (t) => {
    for (const batches of [1, 9]) {
      const { answered, batches: source } = encodedStore(batches, positionsAs)
      const body = renderEventsBody(source, [])
      const bytes = Buffer.isBuffer(body) ? body : Buffer.concat(await (body as Readable).toArray())
      t.equal(Buffer.isBuffer(body), batches < 9, `${batches} batches: ${batches < 9 ? 'whole' : 'streamed'}`)
      t.equal(bytes.toString(), `{"data":[${answered.map(encodeMessage).join(',')}],"errors":[]}`, `${batches} batches: byte for byte`)
    }
  })
}

t.test('MessageListWriter.encodedRun: a comma before each event but the list\'s first, and a stop after the event that passes the limit', async (t) => {
  const stored = [message(0), message(1), message(2), message(3)]
  const { bytes, offsets } = encodeMessageList(stored)
  const encoded = { bytes, offsets, positions: [3, 1, 2] }
  const json = stored.map(encodeMessage)
  const writer = new MessageListWriter()
  t.equal(writer.encodedRun(encoded, 0, 3, true, Number.POSITIVE_INFINITY), 3)
  t.equal(writer.take().toString(), [json[3], json[1], json[2]].join(','))
  const limited = new MessageListWriter()
  t.equal(limited.encodedRun(encoded, 1, 3, false, json[1]!.length), 2, 'stops after the event that passed the limit')
  t.equal(limited.take().toString(), `,${json[1]},`.slice(0, -1))
})

/**
 * A synchronous store handing over `count` events encoded, in batches of `batchSize`, the
 * positions `pick` keeps (all of them: one run; some: runs with gaps); throws after `failAfter` batches.
 */
function gzipStore (count: number, batchSize: number, pick: (position: number) => boolean, failAfter = Number.POSITIVE_INFINITY, unencoded = (_batch: number) => false) {
  const stored = Array.from({ length: count }, (_, i) => message(i))
  const { bytes, offsets } = encodeMessageList(stored)
  const state = { released: false, answered: [] as Message[] }
  const chosen = Array.from({ length: count }, (_, i) => i).filter(pick)
  function * source (): Generator<EventBatch> {
    try {
      for (let from = 0, batch = 0; from < chosen.length; from += batchSize, batch++) {
        if (batch === failAfter) throw new Error('the store broke')
        const positions = chosen.slice(from, from + batchSize)
        const messages = positions.map((position) => stored[position]!)
        state.answered.push(...messages)
        yield unencoded(batch) ? { messages } : { messages, encoded: { bytes, offsets, positions } }
      }
    } finally {
      state.released = true
    }
  }
  return { state, batches: { [Symbol.iterator]: () => source() }, bytes, offsets }
}

t.test('gzip: a streamed answer comes gzipped, whole blocks kept, runs across batches; the plain answer once decompressed', async (t) => {
  const count = 8000
  const cases: Array<[string, (position: number) => boolean]> = [
    ['every event, blocks across batches', () => true],
    ['a gap inside each block', (p) => p % 64 !== 40],
    ['a gap every other block', (p) => p % 128 !== 100],
    ['from inside a block on', (p) => p >= 70],
    ['every other event: no block whole', (p) => p % 2 === 0]
  ]
  for (const [name, pick] of cases) {
    const blocks = new DeflatedBlocks(64)
    const { state, batches, bytes, offsets } = gzipStore(count, 100, pick)
    const itemError = { id: 'x', item_type: 'device' as const, message: 'invalid_device' as const }
    const body = renderEventsBody(batches, [itemError], { gzipBlocks: blocks })
    t.ok(body instanceof GzippedEventsStream, `${name}: gzipped as it streams`)
    const gzipped = Buffer.concat(await (body as Readable).toArray())
    t.equal(gunzipSync(gzipped).toString(), `{"data":[${state.answered.map(encodeMessage).join(',')}],"errors":[${JSON.stringify(itemError)}]}`, `${name}: byte for byte`)
    t.equal(state.released, true, `${name}: query released`)
    // Every block the answer holds whole once it streams (the first 256 KiB, some 1,700 events
    // here, are written before it knows it will) is in it as kept.
    const streaming = 2500
    const whole = Array.from({ length: count / 64 }, (_, n) => n).filter((n) => n * 64 >= streaming && Array.from({ length: 64 }, (_, i) => n * 64 + i).every(pick))
    const made = blocks.made
    const spliced = await Promise.all(whole.map(async (n) => gzipped.indexOf((await blocks.block(bytes, offsets, n)!).deflated) !== -1))
    t.equal(spliced.filter((found) => found).length, whole.length, `${name}: all ${whole.length} whole blocks spliced in`)
    t.ok(blocks.made === made || whole.length === 0, `${name}: and kept`)
  }
  // A batch handed over without its JSON in the middle of a block: the held events go first.
  const mixed = gzipStore(8000, 100, () => true, Number.POSITIVE_INFINITY, (batch) => batch % 10 === 7)
  const mixedBody = renderEventsBody(mixed.batches, [], { gzipBlocks: new DeflatedBlocks(256) }) as Readable
  t.equal(gunzipSync(Buffer.concat(await mixedBody.toArray())).toString(), `{"data":[${mixed.state.answered.map(encodeMessage).join(',')}],"errors":[]}`, 'batches without JSON among encoded ones: byte for byte')
})

t.test('gzip: a store failing mid-stream is reported once; a client leaving releases the query', async (t) => {
  const cuts: unknown[] = []
  const failing = gzipStore(3000, 100, () => true, 20)
  const body = renderEventsBody(failing.batches, [], { gzipBlocks: new DeflatedBlocks(64), onCut: (error) => cuts.push(error) }) as Readable
  await t.rejects(body.toArray(), { message: 'the store broke' })
  t.equal(cuts.length, 1)
  t.equal(failing.state.released, true)

  const leaving = gzipStore(3000, 100, () => true)
  const left = renderEventsBody(leaving.batches, [], { gzipBlocks: new DeflatedBlocks(64), onCut: (error) => cuts.push(error) }) as Readable
  const reader = left[Symbol.asyncIterator]()
  t.equal((await reader.next()).done, false)
  await reader.return?.()
  // Closed once the chunk being compressed is done with (zlib's step is not cut short).
  await new Promise((resolve) => { if (left.closed) resolve(undefined); else left.once('close', resolve) })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(leaving.state.released, true)
  t.equal(cuts.length, 1, 'leaving is not a cut')
})

t.test('gzip: a block whose compression fails ends the answer with the error; the query is released', async (t) => {
  const failing = new DeflatedBlocks(64, 1 << 20, async () => { throw new Error('zlib broke') })
  const { state, batches } = gzipStore(8000, 100, () => true)
  const body = renderEventsBody(batches, [], { gzipBlocks: failing }) as Readable
  await t.rejects(body.toArray(), { message: 'zlib broke' })
  t.equal(state.released, true)
  t.equal(failing.count, 0, 'nothing kept')
})

t.test('gzip: past BLOCKS_MADE_AT_ONCE, a block not kept is compressed as it goes', async (t) => {
  const waiting: Array<() => void> = []
  const stuck = new DeflatedBlocks(64, 1 << 20, async (text) => {
    await new Promise<void>((resolve) => waiting.push(resolve))
    return text
  })
  // Other answers hold every block making there is.
  const { bytes, offsets } = encodeMessageList(Array.from({ length: 200 }, (_, i) => message(i)))
  const held = [stuck.block(bytes, offsets, 0), stuck.block(bytes, offsets, 1)]
  const { state, batches } = gzipStore(8000, 100, () => true)
  const body = renderEventsBody(batches, [], { gzipBlocks: stuck }) as Readable
  const plain = gunzipSync(Buffer.concat(await body.toArray())).toString()
  t.equal(plain, `{"data":[${state.answered.map(encodeMessage).join(',')}],"errors":[]}`, 'byte for byte, none of it kept')
  t.equal(stuck.made, 2)
  waiting.splice(0).forEach((resolve) => { resolve() })
  await Promise.all(held)
})
