import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { connect } from 'node:net'
import { manyEvents } from '../helper.js'
import { collect, connectClient, mosquittoSkip, receivedIds, startMosquitto, waitUntil } from '../mqtt/mosquitto.js'
import { fixtureServerEnv, startServer } from '../server-process.js'
import { SseClient } from './sse-client.js'

const reader = { authorization: 'Bearer reader' }
const writer = { authorization: 'Bearer writer' }

/** A started WORKERS=2 provider, once both workers listen (its files in `dir`: tap's testdir() empties the folder on every call). */
async function twoWorkers (t: Test, env: Record<string, string>, options: { detached?: boolean, dir?: string } = {}) {
  const server = startServer({ ...fixtureServerEnv(options.dir ?? t.testdir(), 'fixture-events'), ...env, WORKERS: '2' }, options)
  t.teardown(() => { try { process.kill(options.detached === true ? -server.child.pid! : server.child.pid!, 'SIGKILL') } catch {} })
  const base = await server.listening
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && server.output().stdout.split('Server listening').length - 1 < 2) await new Promise((resolve) => setTimeout(resolve, 50))
  return { server, base }
}

function events (prefix: string, count: number): string {
  return Array.from({ length: count }, (_, i) => JSON.stringify({ message_id: `${prefix}-${i}`, message_code: 'EMPTY', message_category: 'alert', date_time: new Date(Date.UTC(2025, 5, 1) + i * 1000).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1' })).join('\n')
}

/**
 * Posts `body` to the ingest so that its request has arrived when `shutDown` is called, and the
 * rest of its body after: the raw answer.
 */
async function ingestAcrossShutdown (t: Test, base: string, body: string, shutDown: () => void): Promise<string> {
  const ingest = connect(Number(new URL(base).port), '127.0.0.1')
  t.teardown(() => ingest.destroy())
  let answer = ''
  ingest.setEncoding('latin1').on('data', (chunk: string) => { answer += chunk })
  const answered = new Promise((resolve) => ingest.once('end', resolve))
  ingest.write(`POST /ingest/events HTTP/1.1\r\nhost: x\r\nauthorization: ${writer.authorization}\r\ncontent-type: application/x-ndjson\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  shutDown()
  await new Promise((resolve) => setTimeout(resolve, 20))
  ingest.write(body.slice(10))
  await answered
  return answer
}

t.test('WORKERS=2 stopping: an ingest acknowledged by one worker as the shutdown begins reaches the streams of every worker before they end', async (t) => {
  const { server, base } = await twoWorkers(t, {})
  // Connections are handed to the workers in turn: these streams are on both.
  const clients = Array.from({ length: 6 }, () => new SseClient(`${base}/svc/v2/events/stream?device_ids=soap-001`, reader))
  t.teardown(() => { for (const client of clients) client.close() })
  await Promise.all(clients.map((client) => client.until((c) => c.status === 200, 10_000)))
  const answer = await ingestAcrossShutdown(t, base, events('stop', 3), () => { server.child.kill('SIGTERM') })
  t.match(answer, /^HTTP\/1\.1 200 [\s\S]*\{"written":3,"unchanged":0,"refused":\[\]\}$/, 'the ingest under way when the shutdown began is acknowledged')
  t.equal(await server.exited, 0)
  for (const client of clients) {
    await client.until((c) => c.ended, 5000, 'the stream\'s end')
    t.same(client.messages.map((message) => JSON.parse(message.data!).message_id), ['stop-0', 'stop-1', 'stop-2'], 'every stream got the acknowledged events before it ended')
  }
})

t.test('WORKERS=2 stopping: events acknowledged as the shutdown begins are published to MQTT', { skip: mosquittoSkip() }, async (t) => {
  const broker = await startMosquitto(t)
  const subscriber = await connectClient(t, broker.url, { protocolVersion: 5 })
  const received = collect(subscriber)
  await subscriber.subscribeAsync('svc/v2/events/#', { qos: 1 })
  const { server, base } = await twoWorkers(t, { MQTT_URL: broker.url })
  const answer = await ingestAcrossShutdown(t, base, events('mqtt-stop', 3), () => { server.child.kill('SIGTERM') })
  t.match(answer, /^HTTP\/1\.1 200 [\s\S]*\{"written":3,"unchanged":0,"refused":\[\]\}$/, 'the ingest under way when the shutdown began is acknowledged')
  t.equal(await server.exited, 0)
  await waitUntil(() => received.length >= 3, 5000, 'the three events on the broker')
  t.same([...receivedIds(received)].sort(), ['mqtt-stop-0', 'mqtt-stop-1', 'mqtt-stop-2'])
})

t.test('WORKERS=2: a signal to the whole process group (Ctrl-C, systemd) stops each worker once, and an answer under way comes out whole', async (t) => {
  // 20,000 events: some 4 MB, streamed a chunk at a time.
  const dir = t.testdir()
  const { server, base } = await twoWorkers(t, { EVENTS_FILE: manyEvents(dir, 20_000) }, { detached: true, dir })
  const socket = connect(Number(new URL(base).port), '127.0.0.1')
  t.teardown(() => socket.destroy())
  let received = ''
  socket.setEncoding('latin1')
  const ended = new Promise((resolve) => socket.once('end', resolve))
  const started = new Promise((resolve) => socket.once('data', resolve))
  socket.on('data', (chunk: string) => { received += chunk })
  socket.write(`GET /svc/v2/events?start_date=2024-01-01T00:00:00Z HTTP/1.1\r\nhost: x\r\nauthorization: ${reader.authorization}\r\n\r\n`)
  await started
  // The reader stops while the group is signalled: the answer is still being written.
  socket.pause()
  process.kill(-server.child.pid!, 'SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 300))
  socket.resume()
  await ended
  t.ok(received.endsWith('\r\n0\r\n\r\n'), 'the answer came whole')
  t.equal(await server.exited, 0, 'a graceful shutdown')
  t.notMatch(server.output().stderr + server.output().stdout, /second SIGTERM/)
})

t.test('WORKERS=2: a worker that fails its shutdown makes the provider exit 1', async (t) => {
  const { server } = await twoWorkers(t, {})
  const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.child.pid)], { encoding: 'utf8' }).trim().split(/\s+/).map(Number)
  t.equal(workers.length, 2)
  server.child.kill('SIGTERM')
  process.kill(workers[0]!, 'SIGKILL')
  t.equal(await server.exited, 1)
})

t.test('WORKERS=2: a second signal forces the end, as in a single process', async (t) => {
  const { server, base } = await twoWorkers(t, {}, { detached: true })
  // An ingest whose body never comes in full holds the shutdown (for up to 6 s, then it exits 0).
  const ingest = connect(Number(new URL(base).port), '127.0.0.1')
  t.teardown(() => ingest.destroy())
  ingest.on('error', () => {})
  ingest.write(`POST /ingest/events HTTP/1.1\r\nhost: x\r\nauthorization: ${writer.authorization}\r\ncontent-type: application/x-ndjson\r\ncontent-length: 1000\r\n\r\n{"mess`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  process.kill(-server.child.pid!, 'SIGINT')
  await new Promise((resolve) => setTimeout(resolve, 300))
  process.kill(-server.child.pid!, 'SIGINT')
  // A graceful end says 0; only the force says 1.
  t.equal(await server.exited, 1, 'forced')
  t.match(server.output().stderr, /A second signal: stopping the workers at once/)
})
