import t, { type Test } from 'tap'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { AUTH, build, fixturesDir, INGEST_AUTH, OTHER_TOKEN, storeFromEnv, storeWithHeldHealth, manyEvents } from './helper.js'
import { SseClient } from './live/sse-client.js'
import { RESUME_EVENTS_PER_TURN } from '../src/routes/event-stream.js'
import { EVENT_BATCH_SIZE } from '../src/store/event-store.js'

const NDJSON = { 'content-type': 'application/x-ndjson' }

async function listening (t: Test, overrides: Parameters<typeof build>[1] = {}, serverOverrides: Parameters<typeof build>[2] = {}): Promise<{ app: FastifyInstance, base: string }> {
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  const app = await build(t, { eventsFile, ...overrides }, serverOverrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening')
  return { app, base: `http://127.0.0.1:${address.port}` }
}

function stream (t: Test, url: string, headers: Record<string, string> = AUTH): SseClient {
  const client = new SseClient(url, headers)
  t.teardown(() => client.close())
  return client
}

/** A stream opened on a raw socket, once its head has arrived. */
async function rawStream (t: Test, base: string): Promise<Socket> {
  const url = new URL(base)
  const socket = connect(Number(url.port), url.hostname)
  t.teardown(() => socket.destroy())
  socket.on('error', () => {})
  socket.write(`GET /svc/v2/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`)
  await new Promise((resolve) => socket.once('data', resolve))
  return socket
}

let counter = 0
const event = (overrides: Record<string, unknown> = {}) => ({
  message_id: `s-${++counter}`,
  message_code: 'EMPTY',
  message_category: 'alert',
  date_time: new Date(Date.UTC(2025, 4, 1) + counter * 1000).toISOString(),
  device_id: 'soap-001',
  space_id: 'bldg-a/floor-1',
  ...overrides
})

async function ingest (app: FastifyInstance, events: unknown[]) {
  const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: events.map((e) => JSON.stringify(e)).join('\n') })
  if (answer.statusCode !== 200) throw new Error(answer.body)
  return answer.json()
}

/** The cursor of one new event, as a stream that then closes received it. */
async function cursorOfOneEvent (t: Test, app: FastifyInstance, base: string): Promise<string> {
  const first = stream(t, `${base}/svc/v2/events/stream`)
  await first.until((client) => client.status === 200)
  await ingest(app, [event()])
  await first.until((client) => client.messages.length === 1)
  first.close()
  return first.messages[0]!.id!
}

t.test('the events endpoint\'s checks, in its order, as JSON errors before the stream', async (t) => {
  const { app } = await listening(t)
  const get = async (query: string, headers: Record<string, string> = AUTH) => {
    const answer = await app.inject({ url: `/svc/v2/events/stream${query}`, headers })
    return answer.json()
  }
  t.same(await get('', {}), { status: 401, message: 'unauthorized_request' })
  t.same(await get('', INGEST_AUTH), { status: 403, message: 'forbidden' }, 'an ingest token does not read')
  t.same(await get('?message_ids=a'), { status: 400, message: 'invalid_parameter' }, 'message_ids makes no sense live')
  t.same(await get('?end_date=2025-01-01T00:00:00Z'), { status: 400, message: 'invalid_parameter' })
  t.same(await get('?device_ids=a&device_ids=b'), { status: 400, message: 'duplicate_parameter' })
  t.same(await get('?message_category=alert&message_codes=EMPTY'), { status: 400, message: 'invalid_parameter_combination' })
  t.same(await get('?message_category=sometimes'), { status: 400, message: 'invalid_parameter' })
  t.same(await get('?start_date=yesterday'), { status: 403, message: 'invalid_start_date' })
  t.same(await get('?start_date=2999-01-01T00:00:00Z'), { status: 403, message: 'invalid_start_date' })
})

t.test('live: matching events of known entities, byte for byte as the events endpoint serves them, with cursors', async (t) => {
  const { app, base } = await listening(t)
  const all = stream(t, `${base}/svc/v2/events/stream`)
  const alerts = stream(t, `${base}/svc/v2/events/stream?message_category=alert&space_ids=bldg-a/floor-2,nowhere`)
  await all.until((client) => client.status === 200)
  await alerts.until((client) => client.frames.length >= 1, 5000, 'the item_errors event')
  t.equal(all.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.same(alerts.frames[0], { event: 'item_errors', data: JSON.stringify([{ id: 'nowhere', item_type: 'space', message: 'invalid_space' }]) })

  const sent = [event(), event({ message_category: 'notification', message_code: 'LOW_LEVEL' }), event({ device_id: 'counter\'003', space_id: 'bldg-a/floor-2' }), event({ device_id: undefined, space_id: 'bldg-a/floor-2', message_code: 'OCCUPANCY_HIGH', message_category: 'notification' })]
  t.equal((await ingest(app, sent)).written, 4)
  await all.until((client) => client.messages.length === 4)
  await alerts.until((client) => client.messages.length === 1)
  const served = await app.inject({ url: `/svc/v2/events?start_date=${sent[0]!.date_time}`, headers: AUTH })
  const servedJson = served.body.slice('{"data":['.length, served.body.indexOf('],"errors"')).split(/,(?=\{"message_id")/)
  t.same(all.messages.map((frame) => frame.data), servedJson, 'the same bytes as the events endpoint, in acceptance order')
  t.equal(alerts.messages[0]!.data, servedJson[2], 'filters: alerts in bldg-a/floor-2 only')
  const cursors = all.messages.map((frame) => frame.id!)
  t.equal(new Set(cursors).size, 4, 'each event its own cursor')
})

t.test('resume with Last-Event-ID: everything accepted after the cursor, none twice, then live', async (t) => {
  const { app, base } = await listening(t)
  const first = stream(t, `${base}/svc/v2/events/stream?device_ids=soap-001`)
  // Stays connected throughout: what it got live is what a resume must hand out, byte for byte.
  const watcher = stream(t, `${base}/svc/v2/events/stream?device_ids=soap-001`)
  await first.until((client) => client.status === 200)
  await watcher.until((client) => client.status === 200)
  const a1 = event()
  const a2 = event()
  await ingest(app, [a1, a2])
  await first.until((client) => client.messages.length === 2)
  const cursor = first.messages[0]!.id!
  first.close()
  const b1 = event()
  const b3 = event()
  await ingest(app, [b1, event({ device_id: 'towel-002' }), b3])
  const resumed = stream(t, `${base}/svc/v2/events/stream?device_ids=soap-001`, { ...AUTH, 'last-event-id': cursor })
  await resumed.until((client) => client.messages.length === 3)
  const ids = resumed.messages.map((frame) => JSON.parse(frame.data!).message_id)
  t.same(ids, [a2.message_id, b1.message_id, b3.message_id], 'what came after the cursor, matching the filter')
  t.equal(new Set(ids).size, 3, 'none twice')
  await watcher.until((client) => client.messages.length === 4)
  t.same(resumed.messages.map(({ id, data }) => ({ id, data })), watcher.messages.slice(1).map(({ id, data }) => ({ id, data })), 'each resumed event byte for byte as it went out live, with its cursor')
  await ingest(app, [event()])
  await resumed.until((client) => client.messages.length === 4, 5000, 'live after the resume')

  const foreign = stream(t, `${base}/svc/v2/events/stream`, { ...AUTH, 'last-event-id': 'someoneelse-12' })
  await foreign.until((client) => client.frames.length >= 1)
  t.equal(foreign.frames[0]!.event, 'reset', 'a cursor of another log: reset')
  t.match(JSON.parse(foreign.frames[0]!.data!), { since: /^\d{4}-\d\d-\d\dT/ })
})

t.test('a cursor older than the retention gets a reset naming from when to backfill', async (t) => {
  const { app, base } = await listening(t, { stream: { retentionEvents: 2, retentionMs: Infinity, heartbeatMs: 15_000, maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 1024 * 1024, maxUnsentBytes: 1 << 30 } })
  const watcher = stream(t, `${base}/svc/v2/events/stream`)
  await watcher.until((client) => client.status === 200)
  const early = event({ date_time: '2025-02-03T04:05:06.789Z' })
  await ingest(app, [event()])
  await watcher.until((client) => client.messages.length === 1)
  const cursor = watcher.messages[0]!.id!
  await ingest(app, [early, event(), event()])
  const resumed = stream(t, `${base}/svc/v2/events/stream`, { ...AUTH, 'last-event-id': cursor })
  await resumed.until((client) => client.frames.length >= 1)
  t.equal(resumed.frames[0]!.event, 'reset')
  t.same(JSON.parse(resumed.frames[0]!.data!), { since: '2025-02-03T04:05:00.000Z' }, 'the earliest dropped event, to the minute')
})

t.test('start_date: the stored events from then, in the events endpoint\'s order, then live', async (t) => {
  const { app, base } = await listening(t)
  const client = stream(t, `${base}/svc/v2/events/stream?start_date=2025-01-01T00:00:00Z&device_ids=soap-001`)
  const stored = await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z&device_ids=soap-001', headers: AUTH })
  const storedIds = stored.json().data.map((message: { message_id: string }) => message.message_id)
  t.ok(storedIds.length > 0)
  await client.until((c) => c.messages.length === storedIds.length, 5000, 'the replay')
  t.same(client.messages.map((frame) => JSON.parse(frame.data!).message_id), storedIds)
  await ingest(app, [event()])
  await client.until((c) => c.messages.length === storedIds.length + 1, 5000, 'live after the replay')
})

t.test('start_date, resumed: a client that drops in the replay gets a reset naming from when to backfill; one that had the whole replay just resumes', async (t) => {
  const { app, base } = await listening(t)
  const query = 'start_date=2024-01-01T00:00:00Z&device_ids=soap-001'
  const client = stream(t, `${base}/svc/v2/events/stream?${query}`)
  const storedCount = (await app.inject({ url: `/svc/v2/events?${query}`, headers: AUTH })).json().data.length
  t.ok(storedCount >= 3)
  await client.until((c) => c.messages.length === storedCount, 5000, 'the replay')
  const ids = client.messages.map((frame) => frame.id!)
  const cursor = ids.at(-1)!
  t.match(cursor, /^[^@]+-\d+$/, 'the last replayed event carries the cursor of the stream\'s start')
  for (const [i, frame] of client.messages.slice(0, -1).entries()) {
    t.equal(frame.id, `${cursor}@${JSON.parse(frame.data!).date_time}`, `replayed event ${i}: the cursor, and how far the replay got`)
  }
  client.close()
  const late = event()
  await ingest(app, [late])

  const midway = client.messages[1]!
  const dropped = stream(t, `${base}/svc/v2/events/stream?${query}`, { ...AUTH, 'last-event-id': midway.id! })
  await dropped.until((c) => c.messages.length === 1, 5000, 'the events accepted after the stream began')
  t.equal(dropped.frames[0]!.event, 'reset', 'the rest of the replay is not skipped without saying so')
  t.same(JSON.parse(dropped.frames[0]!.data!), { since: new Date(JSON.parse(midway.data!).date_time).toISOString() }, 'backfill from the last event it got')
  t.equal(JSON.parse(dropped.messages[0]!.data!).message_id, late.message_id)

  const whole = stream(t, `${base}/svc/v2/events/stream?${query}`, { ...AUTH, 'last-event-id': cursor })
  await whole.until((c) => c.messages.length === 1, 5000, 'the events accepted after the stream began')
  t.same(whole.frames.map((frame) => frame.event), ['message'], 'no reset')
  t.equal(JSON.parse(whole.messages[0]!.data!).message_id, late.message_id)
})

t.test('start_date while an ingest of stored events is on its way (a retry: unchanged, or refused): the replay still sends them, and a new event of that ingest comes once', async (t) => {
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  // A slow disk: the store's write takes 300 ms, so the replay runs while the ingest is on its way.
  const configured = storeFromEnv({ STORE: 'memory', EVENTS_FILE: eventsFile })
  const store = {
    ...configured,
    open: async (context: Parameters<typeof configured.open>[0]) => {
      const opened = await configured.open(context)
      const write = opened.writeEvents.bind(opened)
      opened.writeEvents = async (events) => {
        await new Promise((resolve) => setTimeout(resolve, 300))
        return await write(events)
      }
      return opened
    }
  }
  const { app, base } = await listening(t, { eventsFile, store })
  const url = '/svc/v2/events?start_date=2024-01-01T00:00:00Z&device_ids=soap-001'
  const before = (await app.inject({ url, headers: AUTH })).json().data as Array<Record<string, string>>
  t.ok(before.length >= 3, 'stored events of the device')
  // The same first event again (unchanged), the second with other fields (refused), and a new one.
  const fresh = event({ device_id: 'soap-001', space_id: before[0]!.space_id, date_time: '2025-06-01T00:00:00.000Z' })
  const body = [JSON.stringify(before[0]), JSON.stringify({ ...before[1], message_code: 'SOMETHING_ELSE' }), JSON.stringify(fresh)].join('\n')
  const posting = app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, ...NDJSON }, payload: body })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const client = stream(t, `${base}/svc/v2/events/stream?start_date=2024-01-01T00:00:00Z&device_ids=soap-001`)
  const outcome = (await posting).json()
  t.same([outcome.written, outcome.unchanged, outcome.refused.length], [1, 1, 1], 'the ingest: one written, one unchanged, one refused')
  const after = (await app.inject({ url, headers: AUTH })).json().data.map((message: { message_id: string }) => message.message_id)
  await client.until((c) => c.messages.length >= after.length, 5000, 'the replay and the new event')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(client.messages.map((frame) => JSON.parse(frame.data!).message_id).sort(), [...after].sort(), 'every stored event once, the new one too')
})

t.test('HEAD: the stream\'s headers after the same checks, no body, and no stream kept', async (t) => {
  const { app } = await listening(t, { metricsToken: 'metrics-secret' })
  const head = await app.inject({ method: 'HEAD', url: '/svc/v2/events/stream?device_ids=soap-001,no-such-device', headers: AUTH })
  t.equal(head.statusCode, 200)
  t.match(head.headers['content-type'], 'text/event-stream')
  t.match(head.headers, { 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }, 'as the stream\'s')
  t.equal(head.body, '')
  const metrics = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })
  t.match(metrics.body, 'stream_subscribers 0', 'no subscriber')
  t.equal(head.headers['content-length'], undefined, 'no length: the GET answer, a stream, has none')
  for (const [url, headers] of [['/svc/v2/events/stream?message_ids=x', AUTH], ['/svc/v2/events/stream', {}], ['/svc/v2/events/stream?start_date=x', AUTH]] as const) {
    const get = await app.inject({ url, headers })
    const bad = await app.inject({ method: 'HEAD', url, headers })
    t.equal(bad.statusCode, get.statusCode, `${url}: the checks first, as for GET (${get.statusCode})`)
    t.equal(bad.headers['content-length'], get.headers['content-length'], 'an error answer\'s length, as for GET')
  }
})

t.test('heartbeats, the client bound, and a clean end on shutdown', async (t) => {
  const { app, base } = await listening(t, { stream: { retentionEvents: 100, retentionMs: Infinity, heartbeatMs: 100, maxClients: 2, maxClientsPerToken: 2, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const a = stream(t, `${base}/svc/v2/events/stream`)
  const b = stream(t, `${base}/svc/v2/events/stream`)
  await a.until((client) => client.frames.some((frame) => frame.comment === 'keep-alive'), 3000, 'a heartbeat')
  await b.until((client) => client.status === 200)
  const third = await app.inject({ url: '/svc/v2/events/stream', headers: AUTH })
  t.equal(third.statusCode, 503)
  t.same(third.json(), { status: 503, message: 'service_unavailable' })
  t.equal(third.headers['retry-after'], '5')
  const events = await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z', headers: AUTH })
  t.equal(events.statusCode, 200, 'open streams do not count as requests in flight')
  await app.close()
  await a.until((client) => client.ended, 3000, 'the end of the stream')
  t.ok(a.ended, 'streams end on shutdown')
})

t.test('a shutdown ends the streams after the ingests under way have handed them their events', async (t) => {
  const { EventsFileAppender } = await import('../src/store/memory/events-file-appender.js')
  const { app, base } = await listening(t)
  const client = stream(t, `${base}/svc/v2/events/stream`)
  await client.until((c) => c.status === 200)
  // The store's write slowed down, so that the shutdown comes while it is on its way.
  const append = EventsFileAppender.prototype.append
  EventsFileAppender.prototype.append = async function (this: InstanceType<typeof EventsFileAppender>, text) {
    await new Promise((resolve) => setTimeout(resolve, 300))
    return await append.call(this, text)
  }
  t.teardown(() => { EventsFileAppender.prototype.append = append })
  const sent = [event(), event(), event()]
  const posted = ingest(app, sent)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const closed = app.close()
  t.same((await posted).written, 3, 'acknowledged')
  await closed
  await client.until((c) => c.ended, 3000, 'the end of the stream')
  t.same(client.messages.map((frame) => JSON.parse(frame.data!).message_id), sent.map((e) => e.message_id), 'every acknowledged event reached the stream before it ended')
})

t.test('a subscriber that half-closes its connection (FIN) is gone: its stream ends and its place is free', async (t) => {
  const { base } = await listening(t, { stream: { retentionEvents: 100, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 1, maxClientsPerToken: 1, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const socket = await rawStream(t, base)
  socket.resume()
  const ended = new Promise<boolean>((resolve) => {
    socket.once('end', () => resolve(true))
    setTimeout(() => resolve(false), 3000).unref()
  })
  socket.end()
  t.ok(await ended, 'the provider ended the stream at once, not at a heartbeat a minute away')
  const next = stream(t, `${base}/svc/v2/events/stream`)
  await next.until((client) => client.status === 200, 3000, 'a stream in the freed place')
  t.equal(next.status, 200)
})

t.test('one token has at most STREAM_MAX_CLIENTS_PER_TOKEN streams (429 beyond, with Retry-After); the others still get theirs, and a place freed is taken again', async (t) => {
  const { base } = await listening(t, { stream: { retentionEvents: 100, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 10, maxClientsPerToken: 2, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const open = async (headers: Record<string, string>) => {
    const client = stream(t, `${base}/svc/v2/events/stream`, headers)
    await client.until((c) => c.status !== 0)
    return client
  }
  const first = await open(AUTH)
  await open(AUTH)
  const third = await open(AUTH)
  t.equal(third.status, 429, 'a third stream of the same token')
  await third.until((c) => c.ended)
  t.same(JSON.parse(third.body), { status: 429, message: 'too_many_requests' })
  t.equal(third.headers['retry-after'], '5')
  t.equal((await open({ authorization: `Bearer ${OTHER_TOKEN}` })).status, 200, 'another token still gets one')
  first.close()
  const deadline = Date.now() + 3000
  let again = await open(AUTH)
  while (again.status !== 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    again = await open(AUTH)
  }
  t.equal(again.status, 200, 'the place its closed stream freed')
})

t.test('a replay\'s client that leaves while the store is asked whether it can answer takes no place', async (t) => {
  const { store, asked, letGo } = storeWithHeldHealth()
  const { base } = await listening(t, { store, stream: { retentionEvents: 100, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 10, maxClientsPerToken: 1, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const url = new URL(base)
  const socket = connect(Number(url.port), url.hostname)
  socket.on('error', () => {})
  socket.write(`GET /svc/v2/events/stream?start_date=2024-01-01T00:00:00Z HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`)
  while (!asked()) await new Promise((resolve) => setTimeout(resolve, 10))
  socket.resetAndDestroy()
  await new Promise((resolve) => setTimeout(resolve, 100))
  letGo()
  await new Promise((resolve) => setTimeout(resolve, 100))
  const next = stream(t, `${base}/svc/v2/events/stream`)
  await next.until((client) => client.status !== 0)
  t.equal(next.status, 200, 'the token\'s one place is free')
})

t.test('a subscriber that does not read is disconnected once its unsent data passes the bound', async (t) => {
  const { app, base } = await listening(t, { metricsToken: 'metrics-secret', stream: { retentionEvents: 100, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const socket = await rawStream(t, base)
  // It reads no more (a paused socket also never sees the provider close it: the provider's count tells).
  socket.pause()
  const reader = stream(t, `${base}/svc/v2/events/stream`)
  await reader.until((client) => client.status === 200)
  const connections = () => new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count)))
  t.equal(await connections(), 2)
  let batches = 0
  // Batches of 200 events: each delivery within the bound (a larger one ends every stream, reading or not).
  while (await connections() === 2 && batches++ < 1000) {
    await ingest(app, Array.from({ length: 200 }, () => event({ date_time: new Date(Date.UTC(2025, 5, 1) + counter).toISOString() })))
  }
  t.equal(await connections(), 1, `the provider dropped the stream of the client that does not read (after ${batches} batches of 200 events)`)
  await ingest(app, [event()])
  await reader.until((client) => client.messages.length === (batches * 200) + 1, 5000, 'every event on the reading stream')
  t.ok(reader.messages.length > 0, `a reading client got events (${reader.messages.length})`)
  t.notOk(reader.ended, 'and goes on')
  const metrics = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })
  t.match(metrics.body, 'stream_disconnects_total{reason="own_bound"} 1', 'counted')
  t.match(metrics.body, /stream_unsent_bytes \d+/)
})

t.test('a long resume is written in chunks as the client reads, and what is accepted meanwhile follows it, in order, once', async (t) => {
  const { app, base } = await listening(t)
  const cursor = await cursorOfOneEvent(t, app, base)
  for (let i = 0; i < 20; i++) await ingest(app, Array.from({ length: 1000 }, () => event({ date_time: new Date(Date.UTC(2025, 7, 1) + counter).toISOString() })))
  const resumed = stream(t, `${base}/svc/v2/events/stream`, { ...AUTH, 'last-event-id': cursor })
  await resumed.until((client) => client.status === 200)
  const during = ingest(app, Array.from({ length: 100 }, () => event({ date_time: new Date(Date.UTC(2025, 7, 2) + counter).toISOString() })))
  await during
  await resumed.until((client) => client.messages.length === 20_100, 15_000, 'the backlog and what came meanwhile')
  const seqs = resumed.messages.map((frame) => Number(frame.id!.split('-').at(-1)))
  t.ok(seqs.every((seq, i) => i === 0 || seq === seqs[i - 1]! + 1), 'every event once, in the order accepted')
  t.equal(seqs[0], Number(cursor.split('-').at(-1)) + 1, 'from just after the cursor')
})

t.test('a client that resets its connection while its resume waits for it to read is no error of the provider', async (t) => {
  const logged: string[] = []
  const logger = { level: 'error', stream: { write: (line: string) => { logged.push(line) } } }
  const { app, base } = await listening(t, { stream: { retentionEvents: 100_000, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } }, { logger })
  const cursor = await cursorOfOneEvent(t, app, base)
  for (let i = 0; i < 60; i++) await ingest(app, Array.from({ length: 1000 }, () => event({ date_time: new Date(Date.UTC(2025, 8, 1) + counter).toISOString() })))
  for (let attempt = 0; attempt < 5; attempt++) {
    const url = new URL(base)
    const socket = connect(Number(url.port), url.hostname)
    socket.on('error', () => {})
    socket.write(`GET /svc/v2/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nLast-Event-ID: ${cursor}\r\n\r\n`)
    // It reads the head and a little, then nothing: the resume waits for it to read.
    await new Promise((resolve) => socket.once('data', resolve))
    socket.pause()
    await new Promise((resolve) => setTimeout(resolve, 200))
    socket.resetAndDestroy()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.same(logged, [], 'nothing logged as an error')
  const next = stream(t, `${base}/svc/v2/events/stream`)
  await next.until((client) => client.status === 200)
  t.equal(next.status, 200, 'and the provider goes on')
})

t.test('a delivery larger than STREAM_MAX_BUFFER_BYTES ends the stream cleanly, and its client resumes it whole; streams of many filters do not each hold it', async (t) => {
  const { app, base } = await listening(t, { metricsToken: 'metrics-secret', stream: { retentionEvents: 100_000, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 100, maxClientsPerToken: 100, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const reader = stream(t, `${base}/svc/v2/events/stream`)
  await reader.until((client) => client.status === 200)
  await ingest(app, [event()])
  await reader.until((client) => client.messages.length === 1)
  const cursor = reader.messages[0]!.id!
  // Non-reading streams of 40 different filters, each wanting every event of the next ingest.
  const url = new URL(base)
  const idle: Socket[] = []
  for (let i = 0; i < 40; i++) {
    const socket = connect(Number(url.port), url.hostname)
    socket.on('error', () => {})
    t.teardown(() => socket.destroy())
    socket.write(`GET /svc/v2/events/stream?device_ids=soap-001,no-such-${i} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`)
    await new Promise((resolve) => socket.once('data', resolve))
    socket.pause()
    idle.push(socket)
  }
  const big = Array.from({ length: 2000 }, () => event({ date_time: new Date(Date.UTC(2025, 9, 1) + counter).toISOString() }))
  await ingest(app, big)
  await reader.until((client) => client.ended, 5000, 'the end of the stream')
  t.equal(reader.messages.length, 1, 'none of the large delivery on the ended stream')
  // Ended streams whose clients do not close their side are destroyed after a grace of 2 s.
  await new Promise((resolve) => setTimeout(resolve, 2500))
  const sockets = await new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count)))
  t.ok(sockets <= 1, `the streams that could not take it are ended too (${sockets} connections left)`)
  const metrics = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })
  t.match(metrics.body, 'stream_disconnects_total{reason="too_large"} 41', 'all 41 counted')
  const resumed = stream(t, `${base}/svc/v2/events/stream`, { ...AUTH, 'last-event-id': cursor })
  await resumed.until((client) => client.messages.length === 2000, 10_000, 'the large delivery, resumed')
  t.same(resumed.messages.map((frame) => JSON.parse(frame.data!).message_id), big.map((e) => e.message_id), 'every event once, in order')
})

t.test('a stream ended cleanly before it had any event is given a cursor to resume from: a first delivery larger than STREAM_MAX_BUFFER_BYTES is resumed whole, not lost', async (t) => {
  const { app, base } = await listening(t, { stream: { retentionEvents: 100_000, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 100, maxClientsPerToken: 100, maxBufferBytes: 64 * 1024, maxUnsentBytes: 1 << 30 } })
  const reader = stream(t, `${base}/svc/v2/events/stream`)
  await reader.until((client) => client.status === 200)
  const big = Array.from({ length: 2000 }, () => event({ date_time: new Date(Date.UTC(2025, 9, 1) + counter).toISOString() }))
  await ingest(app, big)
  await reader.until((client) => client.ended, 5000, 'the end of the stream')
  t.equal(reader.messages.length, 0, 'none of the large delivery on the ended stream')
  // A frame of its id alone: EventSource keeps it as its last event ID, and dispatches nothing.
  const last = reader.frames.at(-1)
  t.same(Object.keys(last ?? {}), ['id'], 'its last frame is a cursor alone')
  const resumed = stream(t, `${base}/svc/v2/events/stream`, { ...AUTH, 'last-event-id': last!.id! })
  await resumed.until((client) => client.messages.length === 2000, 10_000, 'the large delivery, resumed')
  t.same(resumed.messages.map((frame) => JSON.parse(frame.data!).message_id), big.map((e) => e.message_id), 'every event once, in order')
})

t.test('a resume of a narrow filter through a long log lets other work in between: the log is read a slice a turn', async (t) => {
  const { app, base } = await listening(t, { stream: { retentionEvents: 100_000, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 2 * 1024 * 1024, maxUnsentBytes: 1 << 30 } })
  const cursor = await cursorOfOneEvent(t, app, base)
  const logged = 24 * RESUME_EVENTS_PER_TURN
  for (let i = 0; i < Math.ceil(logged / 1000); i++) await ingest(app, Array.from({ length: 1000 }, () => event({ date_time: new Date(Date.UTC(2025, 9, 1) + counter).toISOString() })))
  await ingest(app, [event({ device_id: 'towel-002', date_time: new Date(Date.UTC(2025, 9, 2)).toISOString() })])
  // Turns of this process's event loop (the provider's too) counted while the resume goes
  // through the log: had it read the whole log in one turn, only the few around it would count.
  let turns = 0
  let counting = true
  const count = () => { if (counting) { turns++; setImmediate(count) } }
  setImmediate(count)
  const resumed = stream(t, `${base}/svc/v2/events/stream?device_ids=towel-002`, { ...AUTH, 'last-event-id': cursor })
  await resumed.until((client) => client.messages.length === 1, 15_000, 'the one event of the filter')
  counting = false
  t.equal(JSON.parse(resumed.messages[0]!.data!).device_id, 'towel-002', 'the filter\'s one event')
  t.ok(turns >= logged / RESUME_EVENTS_PER_TURN, `${turns} turns went by while ${logged} events were read, ${RESUME_EVENTS_PER_TURN} a turn`)
})

t.test('a start_date replay of many stored events lets other work in between: a turn of the event loop a batch', async (t) => {
  // The memory store's batches are there at once: a replay of a year of a million events held the
  // event loop 0.25–2 s in one piece when its client read fast enough never to be waited for.
  // A folder of its own: listening() makes the test's folder anew.
  const dir = mkdtempSync(join(tmpdir(), 'replay-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const count = 30_000
  const { base } = await listening(t, { eventsFile: manyEvents(dir, count), stream: { retentionEvents: 1000, retentionMs: Infinity, heartbeatMs: 60_000, maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 64 * 1024 * 1024, maxUnsentBytes: 1 << 30 } })
  let turns = 0
  let counting = true
  const countTurn = () => { if (counting) { turns++; setImmediate(countTurn) } }
  setImmediate(countTurn)
  const replayed = stream(t, `${base}/svc/v2/events/stream?start_date=2024-01-01T00:00:00Z`)
  await replayed.until((client) => client.messages.length === count, 30_000, 'every stored event')
  counting = false
  t.equal(JSON.parse(replayed.messages.at(-1)!.data!).message_id, `bulk-${count - 1}`)
  t.ok(turns >= count / EVENT_BATCH_SIZE, `${turns} turns went by while ${count} events were replayed, a batch of ${EVENT_BATCH_SIZE} a turn`)
})
