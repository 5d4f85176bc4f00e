import t from 'tap'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import loadLimits from '../plugins/load-limits.js'
import { keepHalfOpenConnections } from '../src/http/half-open.js'
import { loadSpecificationCatalog } from '../src/specifications/load-specifications.js'
import { CACHE_LIMIT_BYTES } from '../src/specifications/specification-catalog.js'
import { demoDataDir } from '../src/project-root.js'
import { join } from 'node:path'
import { AUTH, build, manyEvents, OTHER_TOKEN, storeFromEnv, testConfig, TOKEN } from './helper.js'
import { silentInfluxUrl } from './influx/influx-server.js'

const EVENTS = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'

/** A listening provider, and a raw exchange with it: what the client writes, everything it reads until the server closes or `until` is met. */
async function listening (t: Parameters<typeof build>[0], overrides: Parameters<typeof build>[1] = {}): Promise<{ app: FastifyInstance, port: number }> {
  const app = await build(t, overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port }
}

async function exchange (port: number, write: (socket: Socket) => void | Promise<void>, until?: (received: string) => boolean): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.setEncoding('utf8')
  const done = new Promise<void>((resolve) => {
    socket.on('data', (chunk: string) => {
      received += chunk
      if (until?.(received) === true) resolve()
    })
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })
  await write(socket)
  await done
  socket.destroy()
  return received
}

function statusAndBody (raw: string): { status: number, body: string, head: string } {
  const end = raw.indexOf('\r\n\r\n')
  const head = raw.slice(0, end)
  return { status: Number(raw.slice(9, 12)), head, body: raw.slice(end + 4) }
}

t.test('a URL that cannot be decoded: 401 without a token, 404 not_found with one', async (t) => {
  const app = await build(t)
  const anonymous = await app.inject({ url: '/%' })
  t.equal(anonymous.statusCode, 401)
  t.same(anonymous.json(), { status: 401, message: 'unauthorized_request' })
  const authorized = await app.inject({ url: '/%', headers: AUTH })
  t.equal(authorized.statusCode, 404)
  t.same(authorized.json(), { status: 404, message: 'not_found' })
})

t.test('a POST with a body that cannot be parsed is still 404 not_found, after the token', async (t) => {
  const app = await build(t)
  const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: EVENTS, headers: { 'content-type': 'application/json', ...headers }, payload: '{not json' })
  const authorized = await post(AUTH)
  t.equal(authorized.statusCode, 404)
  t.same(authorized.json(), { status: 404, message: 'not_found' })
  t.equal((await post({})).statusCode, 401)
  const unknownType = await app.inject({ method: 'POST', url: EVENTS, headers: { 'content-type': 'text/weird', ...AUTH }, payload: 'x' })
  t.same(unknownType.json(), { status: 404, message: 'not_found' })
})

t.test('two Authorization headers are refused, even when both hold a valid token', async (t) => {
  const { port } = await listening(t)
  for (const second of [TOKEN, OTHER_TOKEN, 'nope']) {
    const raw = await exchange(port, (socket) => {
      socket.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\nAuthorization: Bearer ${second}\r\nconnection: close\r\n\r\n`)
    })
    const { status, body } = statusAndBody(raw)
    t.equal(status, 401, `second token ${second}`)
    t.same(JSON.parse(body), { status: 401, message: 'unauthorized_request' })
    t.match(raw, /\r\nwww-authenticate: Bearer\r\n/i, 'the scheme to authenticate with (RFC 9110: a 401 carries it)')
  }
})

t.test('requests Node could not read are answered with the error object, then the connection is closed', async (t) => {
  const { port } = await listening(t)
  const oversized = statusAndBody(await exchange(port, (socket) => {
    socket.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nx-padding: ${'a'.repeat(20_000)}\r\n\r\n`)
  }))
  t.equal(oversized.status, 431)
  t.same(JSON.parse(oversized.body), { status: 431, message: 'request_header_fields_too_large' })
  t.match(oversized.head, /content-type: application\/json; charset=utf-8/)

  const longUrl = statusAndBody(await exchange(port, (socket) => {
    socket.write(`GET ${EVENTS}&device_ids=${'d'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`)
  }))
  t.same(JSON.parse(longUrl.body), { status: 431, message: 'request_header_fields_too_large' }, 'a URL beyond the limit too')

  const malformed = statusAndBody(await exchange(port, (socket) => { socket.write('NOT HTTP AT ALL\r\n\r\n') }))
  t.equal(malformed.status, 400)
  t.same(JSON.parse(malformed.body), { status: 400, message: 'bad_request' })
})

t.test('an unknown Expect and a missing Host are served like any request: the token first', async (t) => {
  const { port } = await listening(t)
  const expect = statusAndBody(await exchange(port, (socket) => {
    socket.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nexpect: something-else\r\nconnection: close\r\n\r\n`)
  }))
  t.equal(expect.status, 401)
  t.same(JSON.parse(expect.body), { status: 401, message: 'unauthorized_request' })
  const expectAuthorized = statusAndBody(await exchange(port, (socket) => {
    socket.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nexpect: something-else\r\nauthorization: ${AUTH.authorization}\r\nconnection: close\r\n\r\n`)
  }))
  t.equal(expectAuthorized.status, 200)
  t.equal(JSON.parse(expectAuthorized.body).data.length, 18)
  const noHost = statusAndBody(await exchange(port, (socket) => {
    socket.write(`GET ${EVENTS} HTTP/1.1\r\nconnection: close\r\n\r\n`)
  }))
  t.equal(noHost.status, 401)
  t.same(JSON.parse(noHost.body), { status: 401, message: 'unauthorized_request' })
})

t.test('a client dribbling its headers is answered 408 request_timeout and disconnected after REQUEST_TIMEOUT_MS', async (t) => {
  const config = testConfig()
  const { port } = await listening(t, { limits: { ...config.limits, requestTimeoutMs: 1000 } })
  let timer: NodeJS.Timeout | undefined
  const raw = await exchange(port, (socket) => {
    socket.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\n`)
    // One header byte every 200 ms: never idle, never finished.
    timer = setInterval(() => { if (socket.writable) socket.write('x') }, 200)
  })
  clearInterval(timer)
  const { status, body } = statusAndBody(raw)
  t.equal(status, 408)
  t.same(JSON.parse(body), { status: 408, message: 'request_timeout' })
})

t.test('readiness says only ready or not: no store kind, no reason, no address', async (t) => {
  const up = await build(t)
  const ready = await up.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.body, '{"status":"ok"}')
  const down = await build(t, { store: storeFromEnv({ STORE: 'influxdb', INFLUX_URL: 'http://127.0.0.1:1', INFLUX_DATABASE: 'x', INFLUX_TIMEOUT_MS: '500' }) })
  const notReady = await down.inject({ url: '/health/ready' })
  t.equal(notReady.statusCode, 503)
  t.equal(notReady.body, '{"status":"unavailable"}')
})

t.test('pipelined requests on one connection run one at a time; beyond MAX_PIPELINED_REQUESTS waiting they are 503', async (t) => {
  const config = testConfig()
  const { port } = await listening(t, { limits: { ...config.limits, maxPipelinedRequests: 2 } })
  const requests = Array.from({ length: 8 }, (_, i) => `GET ${EVENTS}&message_ids=e-0${i} HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\n\r\n`).join('')
  const raw = await exchange(port, (socket) => { socket.write(requests) }, (received) => received.split('HTTP/1.1 ').length - 1 === 8 && received.endsWith('}'))
  const answers = raw.split(/(?=HTTP\/1\.1 )/).map(statusAndBody)
  t.same(answers.map((answer) => answer.status), [200, 200, 200, 503, 503, 503, 503, 503], 'the one answered and the two waiting are served, in order')
  t.same(answers.slice(0, 3).map((answer) => JSON.parse(answer.body).data.map((m: { message_id: string }) => m.message_id)), [['e-00'], ['e-01'], ['e-02']])
  t.match(answers[3]!.head, /retry-after: 5/)
  t.same(JSON.parse(answers[3]!.body), { status: 503, message: 'service_unavailable' })
})

for (const halfOpen of [false, true]) {
  t.test(`pipelined requests still waiting when their connection dies never run${halfOpen ? ', half-open connections allowed (as the provider does)' : ''}`, async (t) => {
    // A route that holds its answer until released: the first request stays unfinished while the
    // client writes three more behind it and leaves.
    const app = Fastify()
    if (halfOpen) keepHalfOpenConnections(app.server)
    t.teardown(() => app.close())
    await app.register(loadLimits, { maxRequestsInFlight: 100, maxPipelinedRequests: 16, maxEventLoopDelayMs: 1000, retryAfterSeconds: 5 })
    let started = 0
    let release = () => {}
    let firstStarted = () => {}
    const first = new Promise<void>((resolve) => { firstStarted = resolve })
    const held = new Promise<void>((resolve) => { release = resolve })
    app.get('/held', async () => {
      started++
      firstStarted()
      await held
      return { ok: true }
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
    await once(socket, 'connect')
    socket.write('GET /held HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(4))
    await first
    // The server has read all four (one running, three waiting) before the client leaves.
    await new Promise((resolve) => setTimeout(resolve, 100))
    socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
    release()
    await new Promise((resolve) => setTimeout(resolve, 200))
    if (!halfOpen) t.equal(started, 1, 'only the request that had its turn ran')
    // The client's FIN may be a half-close: the connection stays open for the answer owed. Once
    // it is written, the client's RST (its socket is gone) tells the provider, and the requests
    // after that one never run.
    else t.ok(started <= 2, `only the request that had its turn ran, and at most the one after it (${started})`)
  })
}

t.test('beyond MAX_REQUESTS_IN_FLIGHT a request is refused at once with 503 and Retry-After', async (t) => {
  // A store that never answers keeps the first request in flight until INFLUX_TIMEOUT_MS.
  const url = await silentInfluxUrl(t)
  const config = testConfig()
  const app = await build(t, {
    store: storeFromEnv({ STORE: 'influxdb', INFLUX_URL: url, INFLUX_DATABASE: 'x', INFLUX_TIMEOUT_MS: '1000' }),
    limits: { ...config.limits, maxRequestsInFlight: 1 }
  })
  const first = app.inject({ url: EVENTS, headers: AUTH })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const second = await app.inject({ url: EVENTS, headers: AUTH })
  t.equal(second.statusCode, 503)
  t.equal(second.headers['retry-after'], '5')
  t.same(second.json(), { status: 503, message: 'service_unavailable' })
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'probes are not counted')
  t.equal((await first).statusCode, 503, 'the first one ends with the store\'s own 503')
  t.equal((await app.inject({ url: EVENTS + '&device_ids=nobody', headers: AUTH })).statusCode, 200, 'and its place is free again')
})

t.test('the specifications answer cache is bounded by bytes', async (t) => {
  const catalog = await loadSpecificationCatalog(join(demoDataDir, 'specifications.json'))
  const codes = [...catalog.codes]
  const first = catalog.answer(undefined, ['fra', 'deu', 'nld', 'spa'])
  let total = 0
  for (let i = 0; i < 2000; i++) {
    // Distinct questions: the whole catalogue and one unknown code of its own each time.
    total += catalog.answer([...codes, `NOPE-${i}`], ['fra', 'deu', 'nld', 'spa']).body.length
  }
  t.ok(total > 2 * CACHE_LIMIT_BYTES, `${total} bytes of answers asked for`)
  t.ok(catalog.cachedBytes <= CACHE_LIMIT_BYTES, `${catalog.cachedBytes} bytes kept`)
  t.ok(catalog.cachedBytes > CACHE_LIMIT_BYTES / 2, 'and the cache is used')
  t.same(catalog.answer(undefined, ['fra', 'deu', 'nld', 'spa']).body, first.body, 'an evicted answer is made again, the same')
})

t.test('beyond MAX_CONNECTIONS a new connection is closed as it arrives; the open ones are served', async (t) => {
  const config = testConfig()
  const { port } = await listening(t, { limits: { ...config.limits, maxConnections: 1 } })
  const first = connect(port, '127.0.0.1')
  await once(first, 'connect')
  t.teardown(() => first.destroy())
  const refused = await exchange(port, (socket) => { socket.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\n\r\n`) })
  t.equal(refused, '', 'the second connection is closed unanswered')
  let answer = ''
  first.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk })
  first.write(`GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\nconnection: close\r\n\r\n`)
  await once(first, 'close')
  t.equal(statusAndBody(answer).status, 200, 'the first one is served')
})

t.test('HEAD answers carry a Content-Length only where the GET answer would have that length: none on 204, 304 and the stream', async (t) => {
  const app = await build(t)
  const specifications = '/svc/v2/event_specifications'
  const get = await app.inject({ url: specifications, headers: AUTH })
  const head = await app.inject({ method: 'HEAD', url: specifications, headers: AUTH })
  t.equal(head.statusCode, 200)
  t.equal(head.headers['content-length'], String(get.rawPayload.length), 'a 200: the GET answer\'s length')
  const notModified = await app.inject({ method: 'HEAD', url: specifications, headers: { ...AUTH, 'if-none-match': String(get.headers.etag) } })
  t.equal(notModified.statusCode, 304)
  t.notOk('content-length' in notModified.headers, 'a 304: none (RFC 9110: only the 200\'s length would be allowed)')
  const stream = await app.inject({ method: 'HEAD', url: '/svc/v2/events/stream', headers: AUTH })
  t.equal(stream.statusCode, 200)
  t.notOk('content-length' in stream.headers, 'the stream: none, as its GET has none')
  const events = await app.inject({ method: 'HEAD', url: EVENTS, headers: AUTH })
  t.equal(events.headers['content-length'], String((await app.inject({ url: EVENTS, headers: AUTH })).rawPayload.length), 'events: the GET answer\'s length')
  const none = await build(t, { specificationsFile: undefined })
  const notImplemented = await none.inject({ method: 'HEAD', url: specifications, headers: AUTH })
  t.equal(notImplemented.statusCode, 204)
  t.equal(notImplemented.headers['x-error-message'], 'not_implemented')
  t.notOk('content-length' in notImplemented.headers, 'a 204: none (RFC 9110 §8.6: MUST NOT)')
})

t.test('HEAD of a large events answer leaves its body unmade, compressed or not', async (t) => {
  // Fastify answers HEAD with the GET route and drains a streamed body: a year's answer was
  // rendered (and compressed) for no one, after the answer had gone, with nothing to bound it.
  const app = await build(t, { eventsFile: manyEvents(t.testdir(), 30_000), metricsToken: 'metrics-secret' })
  const served = async () => Number(/^events_served_total (\d+)/m.exec((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })).body)?.[1] ?? 0)
  const url = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'
  const get = await app.inject({ url, headers: AUTH })
  t.equal(get.headers['transfer-encoding'], 'chunked', 'a streamed answer')
  const before = await served()
  for (const coding of [undefined, 'gzip', 'br']) {
    const head = await app.inject({ method: 'HEAD', url, headers: { ...AUTH, ...(coding === undefined ? {} : { 'accept-encoding': coding }) } })
    t.equal(head.statusCode, 200)
    t.equal(head.rawPayload.length, 0)
    t.equal(head.headers['content-encoding'], coding, `HEAD, ${coding ?? 'identity'}: the GET's headers`)
  }
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(await served() - before, 0, 'no event written into a HEAD answer\'s body')
})
