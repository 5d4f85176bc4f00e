import { copyFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import closingConnections from '../plugins/closing-connections.js'
import { AUTH, build, fixturesDir, INGEST_AUTH, manyEvents } from './helper.js'

/** Whether the promise settles within `ms` (a bound far below what a close that waits for its clients would take). */
function within (promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true, () => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())])
}

function portOf (app: FastifyInstance): number {
  return (app.server.address() as { port: number }).port
}

/**
 * A raw keep-alive client of the provider that sends one events request and then stays, quiet:
 * whether the provider ended the connection, and whether the close finished, each within
 * `waitMs` (far below the keep-alive timeout of 72 s, which is what a close that waits for its
 * clients would take). `onData` sees every chunk the client receives.
 */
async function quietClient (app: FastifyInstance, closed: () => Promise<void> | undefined, onData: () => void = () => {}, waitMs = 5000) {
  const socket = connect(portOf(app), '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => { received += chunk; onData() })
  const ended = within(new Promise((resolve) => socket.once('end', resolve)), waitMs)
  socket.write(`GET /svc/v2/events?start_date=2024-01-01T00:00:00Z HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\n\r\n`)
  try {
    const endedByProvider = await ended
    return { endedByProvider, closeFinished: await within(closed() ?? Promise.reject(new Error('the close never began')), waitMs), received }
  } finally {
    socket.destroy()
  }
}

t.test('the provider closing: an answer still held goes out with Connection: close, and the close does not wait for its client', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  let closed: Promise<void> | undefined
  // The close starts while the request's answer is held: its connection is not idle then.
  app.server.prependListener('request', () => { process.nextTick(() => { closed ??= app.close() }) })
  const { endedByProvider, closeFinished, received } = await quietClient(app, () => closed)
  t.ok(endedByProvider, 'the provider ended the connection after the answer')
  t.match(received, /^HTTP\/1\.1 200 /)
  t.match(received, /\r\nconnection: close\r\n/i)
  t.ok(closeFinished, 'the close finished without waiting for the keep-alive timeout')
})

t.test('the provider closing: a streamed answer under way when the close begins ends its connection once written, and the close does not wait for its client', async (t) => {
  // 20,000 events: some 4 MB, streamed a chunk at a time.
  const app = await build(t, { eventsFile: manyEvents(t.testdir(), 20_000) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  let closed: Promise<void> | undefined
  // The close begins once the answer's headers and first chunk are out, with keep-alive.
  const { endedByProvider, closeFinished, received } = await quietClient(app, () => closed, () => { closed ??= app.close() })
  t.ok(endedByProvider, 'the provider ended the connection after the answer')
  t.match(received, /^HTTP\/1\.1 200 /)
  t.match(received, /\r\ntransfer-encoding: chunked\r\n/i, 'the answer was streamed')
  t.notMatch(received.slice(0, received.indexOf('\r\n\r\n')), /\r\nconnection: close\r\n/i, 'its headers went out with keep-alive, before the close')
  t.ok(received.endsWith('\r\n0\r\n\r\n'), 'the answer came whole')
  t.ok(closeFinished, 'the close finished without waiting for the keep-alive timeout')
})

t.test('the provider closing: a connection that has sent nothing, or part of a request, is ended at once, and the close does not wait for it', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const silent = connect(portOf(app), '127.0.0.1')
  const partial = connect(portOf(app), '127.0.0.1')
  t.teardown(() => { silent.destroy(); partial.destroy() })
  await Promise.all([new Promise((resolve) => silent.once('connect', resolve)), new Promise((resolve) => partial.once('connect', resolve))])
  partial.write('GET /svc/v2/events?start_date=2024-01-01T00:00:00Z HTTP/1.1\r\nhost: x\r\n')
  // Both reach the server before the close begins.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const silentClosed = new Promise((resolve) => silent.once('close', resolve))
  const partialClosed = new Promise((resolve) => partial.once('close', resolve))
  t.ok(await within(app.close(), 3000), 'the close finished without waiting for them')
  t.ok(await within(Promise.all([silentClosed, partialClosed]), 1000), 'both connections were ended')
})

t.test('closing: a connection still writing its answer when the time is up is ended, with a warning, and the close finishes', async (t) => {
  const lines: Array<{ level: number, msg: string, connections?: number }> = []
  const fastify = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  fastify.register(closingConnections, { closeConnectionsAfterMs: 300 })
  // An answer that never ends, to a client that never reads it.
  fastify.get('/endless', (_request, reply) => reply.send(new Readable({ read () { this.push(Buffer.alloc(64 * 1024)) } })))
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => fastify.close())
  const reader = connect(portOf(fastify), '127.0.0.1')
  t.teardown(() => reader.destroy())
  reader.pause()
  const readerClosed = new Promise((resolve) => reader.once('close', resolve))
  reader.write('GET /endless HTTP/1.1\r\nhost: x\r\n\r\n')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const closed = fastify.close()
  t.notOk(await within(closed, 100), 'the answer under way is waited for')
  t.ok(await within(closed, 3000), 'then ended: the close finished')
  // Reading again, the client finds its connection ended.
  reader.on('error', () => {})
  reader.resume()
  t.ok(await within(readerClosed, 1000), 'the reader\'s connection was ended')
  t.match(lines, [{ level: 40, connections: 1, msg: /closing: connections whose answers were still being written are ended/ }])
})

/** The status lines and the Connection headers of the answers in raw HTTP/1.1 bytes, in order. */
function answersIn (received: string): Array<{ status: number, close: boolean }> {
  const answers: Array<{ status: number, close: boolean }> = []
  for (const match of received.matchAll(/HTTP\/1\.1 (\d{3}) [^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)) {
    answers.push({ status: Number(match[1]), close: /^connection: close$/im.test(match[2]!) })
  }
  return answers
}

t.test('the provider closing: requests pipelined before the close are all answered, the last answer ends the connection, and one that arrives during the close is answered 503 with the error object', async (t) => {
  // 20,000 events: some 4 MB, streamed a chunk at a time.
  const app = await build(t, { eventsFile: manyEvents(t.testdir(), 20_000) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const socket = connect(portOf(app), '127.0.0.1')
  t.teardown(() => socket.destroy())
  let received = ''
  let closed: Promise<void> | undefined
  socket.setEncoding('latin1')
  const ended = new Promise((resolve) => socket.once('end', resolve))
  const request = (query: string) => `GET /svc/v2/events?${query} HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\n\r\n`
  // The large answer first, then three small ones pipelined behind it, all before the close.
  socket.write(request('start_date=2024-01-01T00:00:00Z') + request('start_date=2025-01-01T00:00:00Z&end_date=2025-01-01T00:00:05Z').repeat(3))
  socket.on('data', (chunk: string) => {
    received += chunk
    if (closed !== undefined) return
    // The close begins once the large answer is under way; one more request follows it.
    closed = app.close()
    setTimeout(() => { socket.write(request('start_date=2025-01-01T00:00:00Z&end_date=2025-01-01T00:00:05Z')) }, 20)
  })
  t.ok(await within(ended, 5000), 'the provider ended the connection')
  t.ok(await within(closed!, 5000), 'the close finished')
  const answers = answersIn(received)
  t.same(answers.slice(0, 4).map(({ status }) => status), [200, 200, 200, 200], 'the four requests that came before the close are answered')
  t.same(answers.slice(0, 3).map(({ close }) => close), [false, false, false], 'their connection is kept for the answers after them')
  t.same(answers.slice(4), [{ status: 503, close: true }], 'the request that came during the close: 503, and the connection ends')
  t.match(received, /\r\nretry-after: \d+\r\n[\s\S]*\{"status":503,"message":"service_unavailable"\}$/i, 'the error object, with Retry-After')
})

t.test('the provider closing: a connection accepted while the close waits for an ingest under way gets 503 for its request, not a reset', async (t) => {
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  const app = await build(t, { eventsFile })
  await app.listen({ port: 0, host: '127.0.0.1' })
  // An ingest under way holds the close's first steps (the server still listens meanwhile).
  const body = JSON.stringify({ message_id: 'closing-1', message_code: 'EMPTY', message_category: 'alert', date_time: '2025-06-01T00:00:00.000Z', device_id: 'soap-001', space_id: 'bldg-a/floor-1' })
  const ingest = connect(portOf(app), '127.0.0.1')
  t.teardown(() => ingest.destroy())
  let ingestAnswer = ''
  ingest.setEncoding('latin1').on('data', (chunk: string) => { ingestAnswer += chunk })
  ingest.write(`POST /ingest/events HTTP/1.1\r\nhost: x\r\nauthorization: ${INGEST_AUTH.authorization}\r\ncontent-type: application/x-ndjson\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const closed = app.close()
  // A client connects during the close, and sends its request a little later.
  const late = connect(portOf(app), '127.0.0.1')
  t.teardown(() => late.destroy())
  let lateAnswer = ''
  late.setEncoding('latin1').on('data', (chunk: string) => { lateAnswer += chunk })
  late.on('error', () => {})
  const lateEnded = new Promise((resolve) => late.once('close', resolve))
  await new Promise((resolve) => setTimeout(resolve, 250))
  late.write(`GET /svc/v2/events?start_date=2024-01-01T00:00:00Z HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\n\r\n`)
  await lateEnded
  t.match(lateAnswer, /^HTTP\/1\.1 503 [\s\S]*\r\nretry-after: \d+\r\n[\s\S]*\{"status":503,"message":"service_unavailable"\}$/i, 'the late request is answered 503 with the error object')
  ingest.write(body.slice(10))
  t.ok(await within(closed, 5000), 'the close finished')
  t.match(ingestAnswer, /^HTTP\/1\.1 200 [\s\S]*"written":1/, 'the ingest under way was answered')
})
