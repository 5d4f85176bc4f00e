import t, { type Test } from 'tap'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { IncomingMessage, request, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { join } from 'node:path'
import { PassThrough, pipeline, Writable } from 'node:stream'
import { createGzip, gunzipSync } from 'node:zlib'
import { CHUNK_BUFFER_BYTES, giveBackLentBuffer, keptChunkBuffers, lendChunkBuffer } from '../src/events/answer-buffers.js'
import { isDoneWithChunksOnCallback, LentChunkStream } from '../src/events/lent-chunk-stream.js'
import { loadConfig } from '../src/config.js'
import { AUTH, build } from './helper.js'

/** Chunks in lent buffers, chunk i filled with the byte i; each buffer lent while the ones before it may still be on their way. */
async function * lentChunks (count: number, lentMemory: ArrayBuffer[]): AsyncGenerator<Buffer> {
  for (let i = 0; i < count; i++) {
    const buffer = lendChunkBuffer()
    lentMemory.push(buffer.buffer as ArrayBuffer)
    yield buffer.fill(i % 256, 0, 1000).subarray(0, 1000)
  }
}

/** A destination that takes its time over each write, and checks the chunk is unchanged when it is done with it. */
function slowDestination (t: Test, inFlight: Set<ArrayBuffer>): Writable & { received: number } {
  let received = 0
  const destination = new Writable({
    highWaterMark: 1,
    write (chunk: Buffer, _encoding, callback) {
      const copy = Buffer.from(chunk)
      inFlight.add(chunk.buffer as ArrayBuffer)
      setTimeout(() => {
        if (!chunk.equals(copy)) t.fail(`chunk ${received} changed while it was being written`)
        inFlight.delete(chunk.buffer as ArrayBuffer)
        received++
        callback()
      }, 2)
    }
  })
  return Object.defineProperty(destination, 'received', { get: () => received }) as Writable & { received: number }
}

t.test('a chunk goes back to its pool once its destination has written it, never before', async (t) => {
  const inFlight = new Set<ArrayBuffer>()
  const lentMemory: ArrayBuffer[] = []
  const destination = slowDestination(t, inFlight)
  // This destination is done with a chunk when it calls back (as a response or a compressor is).
  const stream = new LentChunkStream(lentChunks(50, lentMemory), () => true)
  // Each chunk is lent while earlier ones are with the destination: never one of theirs.
  const lendWhileWriting = setInterval(() => {
    const buffer = lendChunkBuffer()
    if (inFlight.has(buffer.buffer as ArrayBuffer)) t.fail('a chunk on its way was lent again')
    giveBackLentBuffer(buffer)
  }, 1)
  stream.pipe(destination)
  await once(destination, 'finish')
  clearInterval(lendWhileWriting)
  t.equal(destination.received, 50, 'every chunk written, unchanged')
  const one = lendChunkBuffer()
  t.equal(one.length, CHUNK_BUFFER_BYTES)
  giveBackLentBuffer(one)
  // Written out, the chunks' memory is lent again.
  const again = Array.from({ length: 10 }, () => lendChunkBuffer())
  t.ok(again.some((buffer) => lentMemory.includes(buffer.buffer as ArrayBuffer)), 'written chunks are lent again')
  for (const buffer of again) giveBackLentBuffer(buffer)
})

t.test('piped with { end: false } (stream.pipeline), every chunk arrives and the destination is ended by its caller', async (t) => {
  const inFlight = new Set<ArrayBuffer>()
  const destination = slowDestination(t, inFlight)
  await new Promise<void>((resolve, reject) => { pipeline(new LentChunkStream(lentChunks(20, []), () => true), destination, (error) => { if (error) reject(error); else resolve() }) })
  t.equal(destination.received, 20)
})

t.test('destroyed halfway, the stream ends its iterator and stops writing', async (t) => {
  let finished = false
  async function * chunks (): AsyncGenerator<Buffer> {
    try {
      for (let i = 0; ; i++) yield lendChunkBuffer().fill(1, 0, 10).subarray(0, 10)
    } finally {
      finished = true
    }
  }
  const destination = slowDestination(t, new Set())
  const stream = new LentChunkStream(chunks(), () => true)
  stream.pipe(destination)
  await new Promise((resolve) => setTimeout(resolve, 20))
  stream.destroy()
  await once(stream, 'close')
  t.ok(finished, 'the iterator was ended')
  const received = destination.received
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(destination.received - received <= 1, 'nothing more written but what was on its way')
})

t.test('chunks go back only from a response or a compressor, not from a stream that passes them on', async (t) => {
  t.ok(isDoneWithChunksOnCallback(new ServerResponse(new IncomingMessage(new Socket()))))
  t.ok(isDoneWithChunksOnCallback(createGzip()))
  t.notOk(isDoneWithChunksOnCallback(new PassThrough()), 'a PassThrough calls back while the chunk waits further down')
  const lentMemory: ArrayBuffer[] = []
  const passed: Buffer[] = []
  const through = new PassThrough()
  through.on('data', (chunk: Buffer) => passed.push(chunk))
  new LentChunkStream(lentChunks(5, lentMemory)).pipe(through)
  await once(through, 'end')
  t.equal(passed.length, 5)
  const again = Array.from({ length: 20 }, () => lendChunkBuffer())
  t.notOk(again.some((buffer) => lentMemory.includes(buffer.buffer as ArrayBuffer)), 'none of its chunks is lent again')
  for (const buffer of again) giveBackLentBuffer(buffer)
})

t.test('streamed answers to slow, compressing and departing clients at once each arrive whole and unchanged', async (t) => {
  // 6,000 events of one device: about 1.3 MB, about 40 streamed chunks an answer.
  const eventsFile = join(t.testdir(), 'events.ndjson')
  const start = Date.UTC(2025, 0, 1)
  writeFileSync(eventsFile, Array.from({ length: 6000 }, (_, i) => JSON.stringify({
    message_id: `m-${String(i).padStart(5, '0')}`, message_code: i % 3 === 0 ? 'EMPTY' : 'LOW_LEVEL', message_category: i % 3 === 0 ? 'alert' : 'notification', date_time: new Date(start + i * 60_000).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1'
  })).join('\n') + '\n')
  const app = await build(t, { eventsFile, limits: { ...loadConfig({}).limits } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  // Answers that differ from their first event on, so that a chunk of one showing up in another would be seen.
  const path = (i: number) => `/svc/v2/events?start_date=${new Date(start + i * 13 * 60_000).toISOString()}&end_date=${new Date(start + (4000 + i * 97) * 60_000).toISOString()}`
  const expected = await Promise.all(Array.from({ length: 12 }, async (_, i) => (await app.inject({ url: path(i), headers: AUTH })).rawPayload))
  t.ok(expected.every((body) => body.length > 512 * 1024), 'every answer streams')

  const get = (i: number, { gzip = false, pauseMs = 0, leaveAfter = 0 } = {}) => new Promise<Buffer | undefined>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: path(i), headers: { ...AUTH, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) } }, (res) => {
      const chunks: Buffer[] = []
      let bytes = 0
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        bytes += chunk.length
        if (leaveAfter > 0 && bytes > leaveAfter) { req.destroy(); resolve(undefined) }
        // A slow reader: stops now and then, so the provider's chunks wait in its socket.
        if (pauseMs > 0 && chunks.length % 4 === 0) { res.pause(); setTimeout(() => res.resume(), pauseMs) }
      })
      res.on('end', () => { resolve(Buffer.concat(chunks)) })
      res.on('error', reject)
    })
    req.on('error', (error) => { if (leaveAfter > 0) resolve(undefined); else reject(error) })
    req.end()
  })
  // The pool emptied first (its buffers held here), so what is in it afterwards came back from these answers.
  const held = Array.from({ length: keptChunkBuffers() }, () => lendChunkBuffer())
  t.equal(keptChunkBuffers(), 0)
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => get(i, { gzip: i % 3 === 1, pauseMs: i % 4 === 0 ? 15 : 0, leaveAfter: i % 6 === 5 ? 200_000 : 0 })))
    for (const [i, answer] of answers.entries()) {
      if (i % 6 === 5) continue
      const body = i % 3 === 1 ? gunzipSync(answer!) : answer!
      t.ok(body.equals(expected[i]!), `round ${round}, answer ${i}${i % 3 === 1 ? ' (gzip)' : ''}${i % 4 === 0 ? ' (slow reader)' : ''} arrives as it was written`)
    }
  }
  t.ok(keptChunkBuffers() > 0, `written chunks came back to the pool (${keptChunkBuffers()})`)
  for (const buffer of held) giveBackLentBuffer(buffer)
})
