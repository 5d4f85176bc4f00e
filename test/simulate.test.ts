import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { OptionError, parseSimulateOptions } from '../src/cli/simulate-options.js'
import { parseEventLine } from '../src/data/event-lines.js'
import { buildCatalog } from '../src/demo/catalog.js'
import { LiveEventSource, buildLiveWorld, catalogOf, type LiveWorld } from '../src/demo/live-events.js'
import { loadSimulationInputs } from '../src/demo/live-inputs.js'
import { runPoster, type PosterResult } from '../src/demo/live-poster.js'
import { Random } from '../src/demo/random.js'
import { demoDataDir } from '../src/project-root.js'
import { loadEntityRegistry } from '../src/registry/load-entities.js'
import type { Message } from '../schemas/message.js'

const ENTITIES_FILE = join(demoDataDir, 'entities.json')
const SPECIFICATIONS_FILE = join(demoDataDir, 'specifications.json')
const TOKEN = 'sim-test-token'

async function demoWorld (seed = 1): Promise<LiveWorld> {
  const { entities, catalog } = await loadSimulationInputs(ENTITIES_FILE, SPECIFICATIONS_FILE)
  return buildLiveWorld(entities, catalog, Random.stream(seed, 'types'))
}

/** Asks the source every tickMs from startMs until it gave at least `count` events. */
function takeAtLeast (source: LiveEventSource, startMs: number, count: number, tickMs = 200): { events: Message[], askedAt: number[] } {
  const events: Message[] = []
  const askedAt: number[] = []
  for (let nowMs = startMs; events.length < count; nowMs += tickMs) {
    const due = source.take(nowMs)
    for (let n = 0; n < due.length; n++) askedAt.push(nowMs)
    events.push(...due)
  }
  return { events, askedAt }
}

t.test('the builder gives valid events of known entities, unique IDs, dated when asked, both categories', async (t) => {
  const world = await demoWorld()
  const registry = await loadEntityRegistry(ENTITIES_FILE)
  const { entities } = await loadSimulationInputs(ENTITIES_FILE, SPECIFICATIONS_FILE)
  const spaceOf = new Map(entities.devices.map((device) => [device.id, device.space_id]))
  const startMs = Date.now()
  const source = new LiveEventSource(world, Random.stream(1, 'live'), { rate: 20, startMs, idPrefix: 'sim-test' })
  const { events, askedAt } = takeAtLeast(source, startMs, 500)

  t.equal(world.guessedDevices, 0, 'every demo device has its type from its tag')
  const problems = events.flatMap((event, index) => {
    const parsed = parseEventLine(JSON.stringify(event), index + 1)
    return parsed === undefined || 'problem' in parsed ? [parsed] : []
  })
  t.same(problems, [], 'every event passes the message schema of the ingest')
  t.ok(events.every((event) => registry.knowsEntityOf(event)), 'every event belongs to a device or space of the entities file')
  t.ok(events.every((event) => event.device_id === undefined || spaceOf.get(event.device_id) === event.space_id), 'a device event carries the device\'s space')
  t.equal(new Set(events.map((event) => event.message_id)).size, events.length, 'message IDs are unique')
  t.same(events.slice(0, 3).map((event) => event.message_id), ['sim-test-1', 'sim-test-2', 'sim-test-3'])
  const late = events.filter((event, index) => {
    const ms = Date.parse(event.date_time)
    return ms > askedAt[index]! || ms < askedAt[index]! - 200
  })
  t.same(late, [], 'each event is dated within the tick before it was taken')
  t.ok(events.every((event, index) => index === 0 || event.date_time >= events[index - 1]!.date_time), 'in time order')
  const categories = new Map(world.catalog.specifications.map((specification) => [specification.message_code, specification.message_category]))
  t.ok(events.every((event) => categories.get(event.message_code) === event.message_category), 'codes of the catalog, with their categories')
  const alerts = events.filter((event) => event.message_category === 'alert').length
  t.ok(alerts > 0.08 * events.length && alerts < 0.5 * events.length, `alerts and notifications both (${alerts} alerts of ${events.length})`)
  t.ok(events.some((event) => event.device_id === undefined), 'spaces have events of their own')
  t.ok(new Set(events.map((event) => event.message_code)).size > 15, 'many codes')
})

t.test('the rate holds over time, and the same seed tells the same stories', async (t) => {
  const world = await demoWorld()
  const run = (idPrefix: string) => {
    const source = new LiveEventSource(world, Random.stream(9, 'live'), { rate: 5, startMs: 0, idPrefix })
    const events: Message[] = []
    for (let nowMs = 0; nowMs <= 600_000; nowMs += 200) events.push(...source.take(nowMs))
    return events
  }
  const a = run('a')
  const b = run('b')
  t.ok(a.length > 2700 && a.length < 3300, `about 5 events/s over 10 minutes (${a.length})`)
  t.same(b.map(({ message_id: _, ...rest }) => rest), a.map(({ message_id: _, ...rest }) => rest), 'same codes, entities and times')
  t.equal(b[0]!.message_id, 'b-1', 'only the prefix differs')

  // A story: a dispenser's refill goes low before it is empty or refilled.
  const firstOf = (code: string) => a.findIndex((event) => event.message_code === code)
  t.ok(firstOf('DISP_LOW_LEVEL') < firstOf('DISP_REFILLED'), 'low level comes before a refill')
})

t.test('a caller held up does not get a burst of old events', async (t) => {
  const world = await demoWorld()
  const source = new LiveEventSource(world, Random.stream(3, 'live'), { rate: 50, startMs: 0, idPrefix: 'p', maxCatchUpMs: 1000 })
  takeAtLeast(source, 0, 100)
  const afterGap = source.take(600_000)
  t.ok(afterGap.length < 150, `a 10-minute gap gives about a second of events (${afterGap.length})`)
  t.ok(afterGap.every((event) => Date.parse(event.date_time) > 600_000 - 1000 - 1), 'dated within the last second')
  t.ok(source.take(600_200).length < 30, 'then the usual pace')
})

t.test('the catalog of a specifications file keeps its numbered fault codes by family', async (t) => {
  const built = buildCatalog(60)
  const read = catalogOf(built.specifications)
  t.same([...read.faultCodes].sort(), [...built.faultCodes].sort())
  t.same([...read.categoryOf], [...built.categoryOf])
  t.throws(() => new LiveEventSource(buildLiveWorld({ devices: [], spaces: [], tags: [] }, built, Random.stream(1, 't')), Random.stream(1, 'l'), { rate: 1, startMs: 0, idPrefix: 'x' }),
    /no device or space/)
})

t.test('devices of no demo type get one at random', async (t) => {
  const entities = { devices: [{ id: 'dev-a', space_id: 's1' }, { id: 'soap-7', space_id: 's1' }], spaces: [{ id: 's1' }], tags: [] }
  const world = buildLiveWorld(entities, buildCatalog(32), Random.stream(1, 'types'))
  t.equal(world.guessedDevices, 1)
  t.equal(world.actors.find((actor) => actor.deviceId === 'soap-7')!.kind, 'soap', 'by ID prefix')
})

t.test('options', async (t) => {
  const parsed = parseSimulateOptions(['--url', 'http://localhost:8080/', '--token', 'abc', '--rate', '2.5', '--seed', '4'], {})
  t.match(parsed, { help: false, options: { token: 'abc', rate: 2.5, seed: 4, entitiesFile: ENTITIES_FILE, specificationsFile: SPECIFICATIONS_FILE } })
  if (!parsed.help) t.equal(parsed.options.endpoint.href, 'http://localhost:8080/ingest/events')
  const fromEnv = parseSimulateOptions(['--url', 'https://h/p', '--token', 'abc'], { ENTITIES_FILE: '/e.json', SPECIFICATIONS_FILE: 'none' })
  t.match(fromEnv, { options: { rate: 5, seed: undefined, entitiesFile: '/e.json', specificationsFile: undefined } })
  if (!fromEnv.help) t.equal(fromEnv.options.endpoint.href, 'https://h/p/ingest/events')
  t.same(parseSimulateOptions(['--help']), { help: true })
  for (const args of [
    [], ['--token', 'a'], ['--url', 'http://h'], ['--url', 'ftp://h', '--token', 'a'], ['--url', 'http://h', '--token', 'a b'],
    ['--url', 'http://h', '--token', 'a', '--rate', '0'], ['--url', 'http://h', '--token', 'a', '--rate', 'fast'],
    ['--url', 'http://h', '--token', 'a', '--seed', '1.5'], ['--url', 'http://h', '--token', 'a', '--bogus'],
    ['--url', 'http://h', '--token', 'a', 'extra'], ['--url', 'http://h', '--url', 'http://i', '--token', 'a']
  ]) {
    t.throws(() => parseSimulateOptions(args), OptionError, args.join(' '))
  }
})

interface Received {
  ids: string[]
  authorization: string | undefined
  contentType: string | undefined
}

/**
 * A stand-in for the provider's POST /ingest/events: records every request's message IDs and
 * answers with `answer` (by request number, from 0); 200 answers count every line as written.
 */
async function standInProvider (t: Test, answer: (request: number) => number) {
  const received: Received[] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter((line) => line !== '')
      const status = answer(received.length)
      received.push({
        ids: lines.map((line) => (JSON.parse(line) as Message).message_id),
        authorization: request.headers.authorization,
        contentType: request.headers['content-type']
      })
      if (status === 200) {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify({ written: lines.length, unchanged: 0, refused: [] }))
      } else {
        response.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' })
        response.end(JSON.stringify({ status, message: status === 503 ? 'service_unavailable' : 'unauthorized' }))
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  return { received, endpoint: new URL(`http://127.0.0.1:${port}/ingest/events`) }
}

t.test('the loop retries a batch refused with 503 and loses no event; it stops when asked', async (t) => {
  const { received, endpoint } = await standInProvider(t, (request) => request === 0 ? 503 : 200)
  const world = await demoWorld()
  const source = new LiveEventSource(world, Random.stream(5, 'live'), { rate: 200, startMs: Date.now(), idPrefix: 'r' })
  const controller = new AbortController()
  const notices: string[] = []
  const running = runPoster({
    endpoint, token: TOKEN, source, signal: controller.signal, tickMs: 20, firstRetryMs: 50, maxRetryMs: 100, onNotice: (text) => notices.push(text)
  })
  while (received.length < 6) await new Promise((resolve) => setTimeout(resolve, 20))
  controller.abort()
  const stoppedAt = Date.now()
  const { stats, fatal } = await running
  t.ok(Date.now() - stoppedAt < 1000, 'stops promptly')
  t.equal(fatal, undefined)

  t.equal(received[0]!.authorization, `Bearer ${TOKEN}`)
  t.equal(received[0]!.contentType, 'application/x-ndjson')
  t.ok(received[0]!.ids.length > 0, 'the first request carried events')
  t.same(received[1]!.ids, received[0]!.ids, 'the batch answered 503 is sent again, the same')
  const accepted = received.slice(1).flatMap((request) => request.ids)
  t.same(accepted, accepted.map((_, index) => `r-${index + 1}`), 'every event accepted once, in order, none missing')
  t.match(stats, { sent: accepted.length, written: accepted.length, unchanged: 0, refused: 0, errors: 1, lastStatus: 200, pending: 0 })
  t.match(notices, [/HTTP 503 service_unavailable: sending the \d+ events again/, /takes events again/])
})

t.test('a refused token ends the loop with a message', async (t) => {
  const { received, endpoint } = await standInProvider(t, () => 401)
  const source = new LiveEventSource(await demoWorld(), Random.stream(5, 'live'), { rate: 200, startMs: Date.now(), idPrefix: 'u' })
  const result: PosterResult = await runPoster({ endpoint, token: TOKEN, source, signal: new AbortController().signal, tickMs: 20 })
  t.equal(received.length, 1, 'not tried again')
  t.match(result, { fatal: /refused the token \(HTTP 401 unauthorized\).*INGEST_TOKENS/, stats: { sent: 0, lastStatus: 401 } })
})

t.test('an unreachable provider is tried again until stopped; the events wait', async (t) => {
  // A port that was just free: nothing listens there.
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))

  const source = new LiveEventSource(await demoWorld(), Random.stream(5, 'live'), { rate: 200, startMs: Date.now(), idPrefix: 'n' })
  const controller = new AbortController()
  const attempts: number[] = []
  const running = runPoster({
    endpoint: new URL(`http://127.0.0.1:${port}/ingest/events`),
    token: TOKEN,
    source,
    signal: controller.signal,
    tickMs: 20,
    firstRetryMs: 20,
    maxRetryMs: 60,
    onAttempt: (stats) => attempts.push(stats.errors)
  })
  while (attempts.length < 3) await new Promise((resolve) => setTimeout(resolve, 20))
  controller.abort()
  const { stats, fatal } = await running
  t.equal(fatal, undefined)
  t.match(stats, { sent: 0, lastStatus: 'network error' })
  t.ok(stats.errors >= 3)
  t.ok(stats.pending > 0, 'the batch is still held, not dropped')
})
