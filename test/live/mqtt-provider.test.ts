import t from 'tap'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { loadConfig } from '../../src/config.js'
import { AUTH, build, fixturesDir, INGEST_AUTH } from '../helper.js'
import { collect, connectClient, mosquittoSkip, receivedIds, startMosquitto, waitUntil } from '../mqtt/mosquitto.js'
import { fixtureServerEnv, startServer } from '../server-process.js'
import { SseClient } from './sse-client.js'

const skip = mosquittoSkip()
let counter = 0
const event = (overrides: Record<string, unknown> = {}) => ({
  message_id: `mq-${++counter}`,
  message_code: 'EMPTY',
  message_category: 'alert',
  date_time: new Date(Date.UTC(2025, 6, 1) + counter * 1000).toISOString(),
  device_id: 'soap-001',
  space_id: 'bldg-a/floor-1',
  ...overrides
})

async function ingest (app: FastifyInstance, events: unknown[]) {
  const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: events.map((e) => JSON.stringify(e)).join('\n') })
  if (answer.statusCode !== 200) throw new Error(answer.body)
  return answer.json()
}

async function providerWithBroker (t: Parameters<typeof build>[0] & { testdir (): string }, url: string) {
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  return await build(t, { eventsFile, mqtt: loadConfig({ MQTT_URL: url }).mqtt, metricsToken: 'metrics' })
}

t.test('every accepted event is published at QoS 1 to its topic, byte for byte as served', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const subscriber = await connectClient(t, broker.url, { protocolVersion: 5 })
  const received = collect(subscriber)
  await subscriber.subscribeAsync('svc/v2/events/alert/#', { qos: 1 })
  const app = await providerWithBroker(t, broker.url)
  const hostile = event({ device_id: 'dev.+?6', space_id: 're.*(gex)[1]|$^' })
  const space = event({ device_id: undefined, space_id: 'bldg-a/floor-2', message_code: 'OCCUPANCY_HIGH' })
  const notification = event({ message_category: 'notification' })
  t.equal((await ingest(app, [event(), hostile, space, notification])).written, 4)
  await waitUntil(() => received.length >= 3, 5000, 'three alerts')
  const served = await app.inject({ url: `/svc/v2/events?start_date=2025-06-30T00:00:00Z&message_ids=${[hostile, space].map((e) => e.message_id).join(',')}`, headers: AUTH })
  const [hostileJson, spaceJson] = served.body.slice('{"data":['.length, -'],"errors":[]}'.length).split(/,(?=\{"message_id")/)
  const byId = new Map(received.map((r) => [JSON.parse(r.payload.toString()).message_id as string, r]))
  t.equal(byId.get(hostile.message_id)?.topic, 'svc/v2/events/alert/EMPTY/re.*(gex)[1]|$^/dev.%2B?6', 'one ID one level: + encoded')
  t.equal(byId.get(hostile.message_id)?.payload.toString(), hostileJson)
  t.equal(byId.get(space.message_id)?.topic, 'svc/v2/events/alert/OCCUPANCY_HIGH/bldg-a%2Ffloor-2/', 'a space\'s own event: an empty last level')
  t.equal(byId.get(space.message_id)?.payload.toString(), spaceJson)
  t.equal(byId.get(space.message_id)?.packet.qos, 1)
  t.notOk(byId.has(notification.message_id), 'the filter alert/# does not get notifications')
  const ready = await app.inject({ url: '/health/ready' })
  t.same(ready.json(), { status: 'ok', mqtt: 'connected' })
})

t.test('the broker stopped and restarted while ingesting: the provider serves on, and the subscriber gets every event once it is back', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const subscriber = await connectClient(t, broker.url, { protocolVersion: 5, clean: false, clientId: 'restart-subscriber', properties: { sessionExpiryInterval: 3600 }, reconnectPeriod: 200 })
  const received = collect(subscriber)
  await subscriber.subscribeAsync('svc/v2/events/#', { qos: 1 })
  const app = await providerWithBroker(t, broker.url)
  const sent: string[] = []
  const post = async (count: number) => {
    const events = Array.from({ length: count }, () => event())
    sent.push(...events.map((e) => e.message_id))
    t.equal((await ingest(app, events)).written, count)
  }
  await post(50)
  await broker.stop()
  for (let i = 0; i < 5; i++) await post(40)
  const ready = await app.inject({ url: '/health/ready' })
  t.same(ready.json(), { status: 'ok', mqtt: 'disconnected' }, 'ready, and says the broker is away')
  const metrics = (await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics' } })).body
  t.match(metrics, 'mqtt_connected 0')
  t.match(metrics, /mqtt_backlog_events (\d+)/)
  t.ok(Number(/mqtt_backlog_events (\d+)/.exec(metrics)?.[1]) >= 200, 'the events waiting for the broker are counted')
  t.match(metrics, 'mqtt_dropped_events 0')
  const read = await app.inject({ url: `/svc/v2/events?start_date=2025-01-01T00:00:00Z&message_ids=${sent.at(-1)!}`, headers: AUTH })
  t.equal(read.json().data.length, 1, 'serving and ingesting while the broker is down')
  await broker.start()
  await post(10)
  await waitUntil(() => sent.every((id) => receivedIds(received).has(id)), 15_000, 'every event at the subscriber')
  t.equal(receivedIds(received).size, sent.length, `all ${sent.length} events, none lost`)
})

t.test('two provider processes sharing one broker: a stream on one gets what is ingested on the other', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const dir = t.testdir()
  const start = (name: string) => {
    const server = startServer({ ...fixtureServerEnv(dir, name), MQTT_URL: broker.url })
    t.teardown(() => { server.child.kill('SIGKILL') })
    return server
  }
  const [one, two] = [start('one'), start('two')]
  const [baseOne, baseTwo] = await Promise.all([one.listening, two.listening])
  const stream = new SseClient(`${baseOne}/svc/v2/events/stream`, { authorization: 'Bearer reader' })
  t.teardown(() => stream.close())
  await stream.until((client) => client.status === 200)
  for (const base of [baseOne, baseTwo]) {
    const ready = async () => ((await (await fetch(`${base}/health/ready`)).json()) as { mqtt?: string }).mqtt === 'connected'
    const deadline = Date.now() + 5000
    while (!(await ready()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const fresh = event()
  const posted = await fetch(`${baseTwo}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson' }, body: JSON.stringify(fresh) })
  t.same(await posted.json(), { written: 1, unchanged: 0, refused: [] })
  await stream.until((client) => client.messages.length === 1, 5000, 'the event from the other instance')
  t.equal(JSON.parse(stream.messages[0]!.data!).message_id, fresh.message_id)
  const own = event()
  await fetch(`${baseOne}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson' }, body: JSON.stringify(own) })
  await stream.until((client) => client.messages.length === 2, 5000, 'its own event')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(stream.messages.length, 2, 'its own event once, not again from the broker')
})

t.test('WORKERS=2: every worker reports the broker\'s state in /health/ready from the start', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const server = startServer({ ...fixtureServerEnv(t.testdir()), MQTT_URL: broker.url, WORKERS: '2' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const base = await server.listening
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && server.output().stdout.split('Server listening').length - 1 < 2) await new Promise((resolve) => setTimeout(resolve, 50))
  // Each on a connection of its own: the cluster gives them to the workers in turn.
  const states = new Set<string | undefined>()
  for (let i = 0; i < 6; i++) {
    const answer = await fetch(`${base}/health/ready`, { headers: { connection: 'close' } })
    states.add(((await answer.json()) as { mqtt?: string }).mqtt)
  }
  t.same([...states], ['connected'], 'every answer says the broker is connected')
})
