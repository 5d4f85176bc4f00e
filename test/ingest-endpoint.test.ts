import t, { type Test } from 'tap'
import { copyFileSync, readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { AUTH, build, fixturesDir, INGEST_AUTH } from './helper.js'

const NDJSON = { 'content-type': 'application/x-ndjson' }
const JSON_TYPE = { 'content-type': 'application/json' }

/** A provider on a copy of the fixture events, so ingests append to a file of the test's own. */
async function provider (t: Test, overrides: Parameters<typeof build>[1] = {}) {
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  const app = await build(t, { eventsFile, ...overrides })
  return { app, eventsFile }
}

const event = (id: string, overrides: Record<string, unknown> = {}) => ({
  message_id: id,
  message_code: 'EMPTY',
  message_category: 'alert',
  date_time: '2025-03-01T10:00:00.000Z',
  device_id: 'soap-001',
  space_id: 'bldg-a/floor-1',
  ...overrides
})
const ndjson = (...lines: unknown[]) => lines.map((line) => typeof line === 'string' ? line : JSON.stringify(line)).join('\n') + '\n'

/** An ingest whose head and first bytes are sent, the rest held back: its body is in flight. */
async function heldIngest (t: Test, port: number, head: string, first = '{'): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  t.teardown(() => socket.destroy())
  socket.write(`POST /ingest/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${INGEST_AUTH.authorization}\r\nContent-Type: application/x-ndjson\r\n${head}\r\n${first}`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  return socket
}

t.test('tokens: 401 without or with an unknown token, 403 with a consumer token; ingest tokens do not read', async (t) => {
  const { app } = await provider(t)
  const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...NDJSON, ...headers }, payload: ndjson(event('x-1')) })
  t.same((await post({})).json(), { status: 401, message: 'unauthorized_request' })
  t.same((await post({ authorization: 'Bearer nope' })).json(), { status: 401, message: 'unauthorized_request' })
  const consumer = await post(AUTH)
  t.equal(consumer.statusCode, 403)
  t.same(consumer.json(), { status: 403, message: 'forbidden' })
  const read = await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z', headers: INGEST_AUTH })
  t.same(read.json(), { status: 403, message: 'forbidden' }, 'an ingest token does not read events')
  const unknownPath = await app.inject({ url: '/nowhere', headers: INGEST_AUTH })
  t.equal(unknownPath.statusCode, 404, 'a known token on an unknown path: 404')
  t.equal((await post(INGEST_AUTH)).statusCode, 200)
})

t.test('body types and sizes: 415, 413, 400 invalid_body', async (t) => {
  const { app } = await provider(t, { ingestMaxBytes: 2048 })
  const post = (headers: Record<string, string>, payload: string) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...headers }, payload })
  t.same((await post({ 'content-type': 'text/plain' }, ndjson(event('a')))).json(), { status: 415, message: 'unsupported_media_type' })
  t.same((await post({}, '')).json(), { status: 415, message: 'unsupported_media_type' }, 'no content type')
  const large = await post(NDJSON, ndjson(...Array.from({ length: 20 }, (_, i) => event(`big-${i}`))))
  t.equal(large.statusCode, 413)
  t.same(large.json(), { status: 413, message: 'payload_too_large' })
  t.same((await post(NDJSON, 'hello\nworld\n')).json(), { status: 400, message: 'invalid_body' }, 'no line is JSON')
  t.same((await post(JSON_TYPE, '{"message_id":"a"}')).json(), { status: 400, message: 'invalid_body' }, 'JSON, not an array')
  t.same((await post(JSON_TYPE, '[1,')).json(), { status: 400, message: 'invalid_body' }, 'not JSON')
  t.same((await post(NDJSON, '')).json(), { written: 0, unchanged: 0, refused: [] }, 'an empty NDJSON body is no events')
  t.same((await post(JSON_TYPE, '[]')).json(), { written: 0, unchanged: 0, refused: [] }, 'an empty array is no events')
})

t.test('JSON is UTF-8: a charset other than UTF-8 is 415, before the size; a leading byte order mark is ignored; a lone \\r ends a line as in EVENTS_FILE', async (t) => {
  const { app } = await provider(t, { ingestMaxBytes: 2048 })
  const post = (type: string, payload: string | Buffer, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': type, ...headers }, payload })
  for (const type of ['application/x-ndjson; charset=iso-8859-1', 'application/json;charset="latin1"', 'application/x-ndjson; charset=utf-16']) {
    t.same((await post(type, ndjson(event('a')))).json(), { status: 415, message: 'unsupported_media_type' }, type)
  }
  const large = ndjson(...Array.from({ length: 20 }, (_, i) => event(`big-${i}`)))
  t.equal((await post('application/x-ndjson; charset=iso-8859-1', large)).statusCode, 415, 'the type is checked before the size')
  t.equal((await post('application/x-ndjson', large, { 'content-encoding': 'gzip' })).statusCode, 415, 'so is the coding')
  t.same((await post('application/x-ndjson; charset=UTF-8', ndjson(event('utf8-1')))).json(), { written: 1, unchanged: 0, refused: [] }, 'UTF-8 said')
  const bom = Buffer.from([0xef, 0xbb, 0xbf])
  t.same((await post('application/x-ndjson', Buffer.concat([bom, Buffer.from(ndjson(event('bom-1'), event('bom-2')))]))).json(), { written: 2, unchanged: 0, refused: [] }, 'NDJSON after a BOM')
  t.same((await post('application/json', Buffer.concat([bom, Buffer.from(JSON.stringify([event('bom-3')]))]))).json(), { written: 1, unchanged: 0, refused: [] }, 'an array after a BOM')
  t.same((await post('application/x-ndjson', `${JSON.stringify(event('cr-1'))}\r${JSON.stringify(event('cr-2'))}\r\n${JSON.stringify(event('cr-3'))}`)).json(), { written: 3, unchanged: 0, refused: [] }, 'lines ended by \\r, \\r\\n and the end')
  t.same((await post('application/x-ndjson', `{"message_id":\r"x"}\n${JSON.stringify(event('cr-4'))}`)).json().refused.map((refusal: { line: number }) => refusal.line), [1, 2], 'a line cut by a lone \\r is two lines, numbered as such')
})

t.test('NDJSON: valid lines written, the others refused with their line and reason; durable and served at once', async (t) => {
  const { app, eventsFile } = await provider(t)
  const before = readFileSync(eventsFile, 'utf8')
  const body = ndjson(
    event('live-1'),
    '{"message_id": "broken"',
    event('live-2', { device_id: 'ghost-device' }),
    '',
    event('live-3', { message_category: 'sometimes' }),
    event('live-4', { device_id: undefined, space_id: 'bldg-a/floor-2', message_code: 'OCCUPANCY_HIGH', message_category: 'notification', date_time: '2025-03-01T12:00:00+02:00' }),
    '{"message_id":"dup","message_id":"dup","message_code":"EMPTY","message_category":"alert","date_time":"2025-03-01T10:00:00Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}'
  )
  const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: body })
  t.equal(answer.statusCode, 200)
  const result = answer.json()
  t.equal(result.written, 2)
  t.equal(result.unchanged, 0)
  t.same(result.refused.map((refusal: { line: number }) => refusal.line), [2, 3, 5, 7], 'in line order, blank lines counted')
  t.match(result.refused[0].reason, /invalid JSON/)
  t.match(result.refused[1].reason, 'device "ghost-device" is not in the entities file')
  t.match(result.refused[2].reason, /message_category/)
  t.match(result.refused[3].reason, '"message_id" is given twice')

  const appended = readFileSync(eventsFile, 'utf8').slice(before.length)
  t.same(appended.trim().split('\n').map((line) => JSON.parse(line).message_id), ['live-1', 'live-4'], 'appended to EVENTS_FILE')
  t.match(appended, '"date_time":"2025-03-01T10:00:00.000Z"', 'in wire form (UTC)')

  const read = await app.inject({ url: '/svc/v2/events?start_date=2025-03-01T00:00:00Z&end_date=2025-03-02T00:00:00Z', headers: AUTH })
  t.same(read.json().data.map((message: { message_id: string }) => message.message_id), ['live-1', 'live-4'], 'read your writes, in order')
  t.same(read.json().data[1], { message_id: 'live-4', message_code: 'OCCUPANCY_HIGH', message_category: 'notification', date_time: '2025-03-01T10:00:00.000Z', space_id: 'bldg-a/floor-2' })

  const again = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: body })
  t.equal(again.json().written, 0, 'posting again writes nothing')
  t.equal(again.json().unchanged, 2, 'the same events are unchanged')
  t.equal(readFileSync(eventsFile, 'utf8').length, before.length + appended.length, 'and the file is as it was')
})

t.test('a device event in a space the registry does not know is refused, naming the space, in wire form or not; a device in another known space is fine', async (t) => {
  const { app, eventsFile } = await provider(t)
  const before = readFileSync(eventsFile, 'utf8')
  const body = ndjson(
    event('space-1', { space_id: 'no-such-space' }),
    event('space-2', { space_id: 'no-such-space', date_time: '2025-03-01T10:00:00Z' }),
    event('space-3', { space_id: 'bldg-a/floor-2' })
  )
  const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: body })
  t.same(answer.json(), {
    written: 1,
    unchanged: 0,
    refused: [
      { line: 1, reason: 'space "no-such-space" is not in the entities file' },
      { line: 2, reason: 'space "no-such-space" is not in the entities file' }
    ]
  })
  t.same(readFileSync(eventsFile, 'utf8').slice(before.length).trim().split('\n').map((line) => JSON.parse(line).message_id), ['space-3'])
})

t.test('a message_id already stored for another event is refused, in the file or ingested earlier, even within one body', async (t) => {
  const { app } = await provider(t)
  const post = (payload: string) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload })
  const answer = (await post(ndjson(event('e-01'), event('new-1'), event('new-1', { message_code: 'OTHER' }), event('new-1')))).json()
  t.same(answer.refused.map((refusal: { line: number }) => refusal.line), [1, 3])
  t.match(answer.refused[0].reason, 'message_id "e-01" is already stored for a different event')
  t.equal(answer.written, 1)
  t.equal(answer.unchanged, 1, 'the repeat within the body is unchanged')
  const later = (await post(ndjson(event('new-1', { date_time: '2025-03-01T10:00:00.001Z' })))).json()
  t.equal(later.refused.length, 1, 'a millisecond apart is another event')
})

t.test('a JSON array: each element checked on its own, its index + 1 as its line', async (t) => {
  const { app } = await provider(t)
  const payload = `[${JSON.stringify(event('arr-1'))}, {"message_id":"arr-2","message_id":"x"}, 42, ${JSON.stringify(event('arr-3', { date_time: '2025-03-01T10:00:01Z' }))}]`
  const answer = (await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...JSON_TYPE }, payload })).json()
  t.equal(answer.written, 2)
  t.same(answer.refused.map((refusal: { line: number }) => refusal.line), [2, 3])
  t.match(answer.refused[0].reason, 'given twice')
})

t.test('bytes that are not UTF-8: the line is refused, never decoded into another event; an array body is invalid_body', async (t) => {
  const { app } = await provider(t)
  const line = (id: Buffer) => Buffer.concat([Buffer.from('{"message_id":"'), id, Buffer.from('","message_code":"EMPTY","message_category":"alert","date_time":"2025-03-01T10:00:00.000Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}')])
  const latin1 = (text: string) => Buffer.from(text, 'latin1')
  const payload = Buffer.concat([line(latin1('lat\xe9n-1')), Buffer.from('\n'), line(latin1('lat\xebn-1')), Buffer.from('\n'), line(Buffer.from('utf8-\u00e9-1')), Buffer.from('\n')])
  const answer = (await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload })).json()
  t.same(answer, {
    written: 1,
    unchanged: 0,
    refused: [{ line: 1, reason: 'invalid JSON: the line is not valid UTF-8' }, { line: 2, reason: 'invalid JSON: the line is not valid UTF-8' }]
  }, 'each bad line refused with its number; the UTF-8 one written')
  const served = (await app.inject({ url: '/svc/v2/events?start_date=2025-03-01T00:00:00Z&end_date=2025-03-02T00:00:00Z', headers: AUTH })).json().data.map((e: { message_id: string }) => e.message_id)
  t.ok(served.includes('utf8-\u00e9-1'))
  t.notOk(served.some((id: string) => id.includes('\ufffd')), 'nothing stored with a replacement character')
  const array = Buffer.concat([Buffer.from('['), line(latin1('arr-\xff')), Buffer.from(']')])
  const refused = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...JSON_TYPE }, payload: array })
  t.equal(refused.statusCode, 400)
  t.same(refused.json(), { status: 400, message: 'invalid_body' })
})

t.test('an identifier holding a lone surrogate (a JSON escape can make one) is refused: no store could keep it as sent; a whole pair is fine', async (t) => {
  const { app } = await provider(t)
  const payload = ndjson('{"message_id":"z\\ud800","message_code":"EMPTY","message_category":"alert","date_time":"2025-03-01T10:00:00.000Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}', event('pair-\u{1F6BB}'))
  const answer = (await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload })).json()
  t.equal(answer.written, 1, 'the pair')
  t.equal(answer.refused.length, 1)
  t.match(answer.refused[0], { line: 1, reason: /message_id: .* holds a lone surrogate/ })
})

t.test('many concurrent ingests of the same new IDs: each stored once, none refused', async (t) => {
  const { app, eventsFile } = await provider(t)
  const body = ndjson(...Array.from({ length: 50 }, (_, i) => event(`c-${i}`, { date_time: new Date(Date.UTC(2025, 2, 2) + i).toISOString() })))
  const answers = await Promise.all(Array.from({ length: 8 }, () => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: body })))
  const written = answers.reduce((sum, answer) => sum + (answer.json().written as number), 0)
  t.equal(written, 50, 'written once in all')
  t.equal(answers.reduce((sum, answer) => sum + (answer.json().unchanged as number), 0), 350)
  const lines = readFileSync(eventsFile, 'utf8').split('\n').filter((line) => line.includes('"c-'))
  t.equal(lines.length, 50, 'once in the file')
})

t.test('a store that cannot take the write answers 503 with Retry-After, and serves nothing of it', async (t) => {
  const { app, eventsFile } = await provider(t)
  // The file is gone and a directory stands in its place: the append cannot open it.
  const { rmSync, mkdirSync } = await import('node:fs')
  rmSync(eventsFile)
  mkdirSync(eventsFile)
  const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: ndjson(event('lost-1')) })
  t.equal(answer.statusCode, 503)
  t.same(answer.json(), { status: 503, message: 'service_unavailable' })
  t.equal(answer.headers['retry-after'], '5')
  const read = await app.inject({ url: '/svc/v2/events?start_date=2025-03-01T00:00:00Z&message_ids=lost-1', headers: AUTH })
  t.same(read.json().data, [], 'not served: it was not stored')
})

t.test('EVENTS_FILE replaced on disk while serving (an editor, sed -i): ingests are refused (503), never appended to a file no start-up reads again', async (t) => {
  const { app, eventsFile } = await provider(t)
  const post = (id: string) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: ndjson(event(id)) })
  t.same((await post('kept-1')).json(), { written: 1, unchanged: 0, refused: [] }, 'the file opened for appending')
  const { linkSync, renameSync, writeFileSync } = await import('node:fs')
  // A second name for the file the provider opened, to read it once it is replaced.
  linkSync(eventsFile, eventsFile + '.opened')
  writeFileSync(eventsFile + '.new', readFileSync(eventsFile))
  renameSync(eventsFile + '.new', eventsFile)
  const refused = await post('after-1')
  t.equal(refused.statusCode, 503, 'the path names another file now')
  t.same(refused.json(), { status: 503, message: 'service_unavailable' })
  t.notMatch(readFileSync(eventsFile, 'utf8'), 'after-1', 'nothing appended to the file the path names')
  t.notMatch(readFileSync(eventsFile + '.opened', 'utf8'), 'after-1', 'nor to the one replaced')
  const restarted = await build(t, { eventsFile })
  const served = await restarted.inject({ url: '/svc/v2/events?start_date=2025-03-01T00:00:00Z&end_date=2025-03-02T00:00:00Z', headers: AUTH })
  t.same(served.json().data.map((message: { message_id: string }) => message.message_id), ['kept-1'], 'after a restart: what was answered written, and nothing else')
  t.same((await restarted.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: ndjson(event('after-1')) })).json().written, 1, 'the restarted provider appends to the file as it is now')
})

t.test('GET /metrics: with METRICS_TOKEN only; ingest counts and stream subscribers', async (t) => {
  const { app } = await provider(t, { metricsToken: 'metrics-secret' })
  await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: ndjson(event('m-1'), event('e-01'), 'nonsense') })
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401)
  t.equal((await app.inject({ url: '/metrics', headers: AUTH })).statusCode, 401, 'a consumer token does not read metrics')
  const metrics = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })
  t.equal(metrics.statusCode, 200)
  t.match(metrics.headers['content-type'], 'text/plain')
  t.match(metrics.body, 'events_ingested_total{outcome="written"} 1')
  t.match(metrics.body, 'events_ingested_total{outcome="refused"} 2')
  t.match(metrics.body, 'stream_subscribers 0')
  t.notMatch(metrics.body, 'mqtt_connected ', 'no MQTT figures without MQTT_URL')

  const { app: without } = await provider(t)
  t.equal((await without.inject({ url: '/metrics', headers: AUTH })).statusCode, 404, 'not served without METRICS_TOKEN')
})

t.test('metrics: requests by route and status with their latency, events served, store failures; METRICS_PORT serves them too', async (t) => {
  const { freePort } = await import('./free-port.js')
  const port = await freePort()
  const { app } = await provider(t, { metricsToken: 'metrics-secret', metricsPort: port })
  await app.inject({ url: '/svc/v2/events?start_date=2024-01-01T00:00:00Z', headers: AUTH })
  await app.inject({ url: '/svc/v2/events?start_date=2024-01-01T00:00:00Z&bogus=1', headers: AUTH })
  const body = (await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })).body
  t.match(body, /http_request_duration_seconds_count\{route="\/svc\/v2\/events",method="GET",status="200"\} 1/)
  t.match(body, /http_request_duration_seconds_count\{route="\/svc\/v2\/events",method="GET",status="400"\} 1/)
  t.match(body, /events_served_total \d+/)
  t.ok(Number(/events_served_total (\d+)/.exec(body)?.[1]) > 0, 'the events of the answer are counted')
  t.match(body, /store_query_duration_seconds_count\{store="memory",outcome="ok"\} 1/)
  const separate = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Bearer metrics-secret' } })
  t.equal(separate.status, 200)
  t.match(await separate.text(), 'events_served_total')
  const refused = await fetch(`http://127.0.0.1:${port}/metrics`)
  t.equal(refused.status, 401, 'the token there too')
  t.equal(refused.headers.get('www-authenticate'), 'Bearer', 'naming its scheme, as every 401')
})

t.test('a compressed ingest body is 415 unsupported_media_type', async (t) => {
  const { app } = await provider(t)
  const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON, 'content-encoding': 'gzip' }, payload: ndjson(event('gz-1')) })
  t.equal(answer.statusCode, 415)
  t.same(answer.json(), { status: 415, message: 'unsupported_media_type' })
})

t.test('the request histogram is a Prometheus histogram: buckets cumulative, +Inf, sum and count; 404s counted as unrouted', async (t) => {
  const { app } = await provider(t, { metricsToken: 'm' })
  for (let i = 0; i < 3; i++) await app.inject({ url: '/svc/v2/event_specifications', headers: AUTH })
  await app.inject({ url: '/nowhere', headers: AUTH })
  const body = (await app.inject({ url: '/metrics', headers: { authorization: 'Bearer m' } })).body
  t.match(body, '# TYPE http_request_duration_seconds histogram')
  const buckets = [...body.matchAll(/http_request_duration_seconds_bucket\{route="\/svc\/v2\/event_specifications",method="GET",status="200",le="([^"]+)"\} (\d+)/g)].map((m) => [m[1], Number(m[2])] as const)
  t.equal(buckets.at(-1)?.[0], '+Inf')
  t.equal(buckets.at(-1)?.[1], 3)
  t.ok(buckets.every(([, count], i) => i === 0 || count >= buckets[i - 1]![1]), 'cumulative')
  t.match(body, /http_request_duration_seconds_count\{route="\/svc\/v2\/event_specifications",method="GET",status="200"\} 3/)
  t.match(body, /http_request_duration_seconds_sum\{route="\/svc\/v2\/event_specifications",method="GET",status="200"\} [\d.e-]+/)
  t.match(body, /http_request_duration_seconds_count\{route="unrouted",method="GET",status="404"\} 1/)
})

t.test('ingested lines in wire form are stored and judged without making their messages; IDs ingested long before are still found', async (t) => {
  const { WireEvent } = await import('../src/data/wire-line.js')
  const getter = Object.getOwnPropertyDescriptor(WireEvent.prototype, 'message')!.get!
  let made = 0
  Object.defineProperty(WireEvent.prototype, 'message', { configurable: true, get () { made++; return getter.call(this) } })
  t.teardown(() => { Object.defineProperty(WireEvent.prototype, 'message', { configurable: true, get: getter }) })
  const { app } = await provider(t)
  const post = async (lines: unknown[]) => (await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: ndjson(...lines) })).json()
  const at = (i: number) => new Date(Date.UTC(2025, 2, 2) + i * 1000).toISOString()
  // 40,000 events in batches of 2,000: several segments of the store, appended and merged.
  for (let batch = 0; batch < 20; batch++) {
    const answer = await post(Array.from({ length: 2000 }, (_, i) => event(`w-${batch * 2000 + i}`, { date_time: at(batch * 2000 + i) })))
    t.equal(answer.written, 2000)
  }
  t.equal(made, 0, 'no message made for 40,000 new events in wire form')
  // Again: the same events unchanged, one of them at another time refused, a new one at a time already taken written.
  const again = await post([event('w-5', { date_time: at(5) }), event('w-39999', { date_time: at(39999) }), event('w-17', { date_time: at(18) }), event('w-new', { date_time: at(17) })])
  t.same(again, { written: 1, unchanged: 2, refused: [{ line: 3, reason: 'message_id "w-17" is already stored for a different event' }] })
  const read = await app.inject({ url: `/svc/v2/events?start_date=${at(16)}&end_date=${at(19)}`, headers: AUTH })
  t.same(read.json().data.map(({ message_id: id }: { message_id: string }) => id), ['w-16', 'w-17', 'w-new', 'w-18'])
})

t.test('a body of more lines than INGEST_MAX_LINES is 413, nothing written: blank lines count, a line break at the end starts none; an array counts its elements', async (t) => {
  const { app, eventsFile } = await provider(t, { ingestMaxLines: 3 })
  const before = readFileSync(eventsFile, 'utf8')
  const post = (headers: Record<string, string>, payload: string) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...headers }, payload })
  const tooMany = { status: 413, message: 'payload_too_large' }
  t.same((await post(NDJSON, ndjson(event('cap-1'), event('cap-2'), 'x', event('cap-3')))).json(), tooMany, 'four lines, one of them refused anyway')
  t.same((await post(NDJSON, ndjson(event('cap-1'), '', '', event('cap-2')))).json(), tooMany, 'blank lines count')
  t.same((await post(NDJSON, 'x\n'.repeat(100_000))).json(), tooMany, 'many refused lines')
  t.same((await post(JSON_TYPE, JSON.stringify([event('cap-1'), event('cap-2'), {}, event('cap-3')]))).json(), tooMany, 'four elements')
  t.same((await post(JSON_TYPE, `[${'{},'.repeat(100_000)}{}]`)).json(), tooMany, 'many elements')
  t.equal(readFileSync(eventsFile, 'utf8'), before, 'nothing written')
  t.same((await post(JSON_TYPE, `{"a":[${'1,'.repeat(10)}1]}`)).json(), { status: 400, message: 'invalid_body' }, 'an object is no array, whatever it holds')
  t.same((await post(NDJSON, ndjson(event('cap-1'), event('cap-2'), 'x'))).json(), { written: 2, unchanged: 0, refused: [{ line: 3, reason: 'invalid JSON (Unexpected token \'x\', "x" is not valid JSON)' }] }, 'three lines and a line break at the end')
  t.same((await post(NDJSON, `${JSON.stringify(event('cap-3'))}\r\n\r\n${JSON.stringify(event('cap-4'))}`)).json(), { written: 2, unchanged: 0, refused: [] }, 'three lines, the last without a line break')
  t.same((await post(JSON_TYPE, JSON.stringify([event('cap-5'), event('cap-6'), event('cap-7')]))).json(), { written: 3, unchanged: 0, refused: [] }, 'three elements')
})

t.test('a long body is read in turns of the event loop: other requests are answered meanwhile', async (t) => {
  const { app } = await provider(t)
  for (const [type, payload] of [[NDJSON, '{}\n'.repeat(20_000)], [JSON_TYPE, `[${'{},'.repeat(19_999)}{}]`]] as const) {
    let turns = 0
    let counting = true
    const count = (): void => { if (counting) { turns++; setImmediate(count) } }
    setImmediate(count)
    const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...type }, payload })
    counting = false
    t.equal(answer.json().refused.length, 20_000)
    t.ok(turns >= 20, `${type['content-type']}: ${turns} turns of the event loop while 20,000 lines were read (one per 1,000 at least)`)
  }
})

t.test('ingest bodies in flight are bounded by INGEST_MAX_BYTES_IN_FLIGHT: 503 with Retry-After beyond, counted by Content-Length (a chunked body at INGEST_MAX_BYTES), freed when answered or abandoned', async (t) => {
  const { app } = await provider(t, { ingestMaxBytes: 2048, ingestMaxBytesInFlight: 4096 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const body = ndjson(event('flight-1'))
  const held = (head: string, first?: string) => heldIngest(t, port, head, first)
  const post = () => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: body })
  const first = await held('Content-Length: 2000\r\n')
  await held('Content-Length: 2000\r\n')
  const refused = await post()
  t.equal(refused.statusCode, 503, `4,000 bytes in flight and ${body.length} more: over 4,096`)
  t.same(refused.json(), { status: 503, message: 'service_unavailable' })
  t.equal(refused.headers['retry-after'], '5')
  first.destroy()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal((await post()).statusCode, 200, 'an abandoned body frees its bytes')
  const chunked = await held('Transfer-Encoding: chunked\r\n', '1\r\n{\r\n')
  t.equal((await post()).statusCode, 503, 'a chunked body counts as INGEST_MAX_BYTES')
  chunked.destroy()
  await new Promise((resolve) => setTimeout(resolve, 100))
  for (let i = 0; i < 5; i++) t.equal((await post()).statusCode, 200, 'answered bodies free their bytes')
  const large = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: 'x'.repeat(3000) })
  t.equal(large.statusCode, 413, 'a body over INGEST_MAX_BYTES is 413, whatever is in flight')
})

t.test('bytes in flight come after the type (415) and count nothing for a request of no body (found by review: both were 503)', async (t) => {
  const { app } = await provider(t, { ingestMaxBytes: 2048, ingestMaxBytesInFlight: 4096 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const held = (head: string, first?: string) => heldIngest(t, port, head, first)
  await held('Transfer-Encoding: chunked\r\n', '1\r\n{\r\n')
  await held('Content-Length: 2048\r\n')
  const otherType = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'text/plain' }, payload: 'hello' })
  t.equal(otherType.statusCode, 415, 'a body of another type is 415, whatever is in flight')
  const noBody = connect(port, '127.0.0.1')
  noBody.on('error', () => {})
  t.teardown(() => noBody.destroy())
  let answer = ''
  noBody.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  noBody.write(`POST /ingest/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${INGEST_AUTH.authorization}\r\nContent-Type: application/x-ndjson\r\n\r\n`)
  while (!answer.includes('\r\n\r\n')) await new Promise((resolve) => setTimeout(resolve, 10))
  t.match(answer, /^HTTP\/1\.1 200 /, 'a request of no body (no Content-Length, not chunked) holds no bytes')
})
