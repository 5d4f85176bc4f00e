import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { AUTH, fixturesDir, testConfig } from './helper.js'
import { runIngest } from './ingest-cli.js'

const event = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({
  message_id: id, message_code: 'LOW_LEVEL', message_category: 'notification', date_time: '2025-03-01T10:00:00+01:00', device_id: 'soap-001', space_id: 'bldg-a/floor-1', ...extra
})

t.test('STORE=memory: ingest appends to EVENTS_FILE, reports refusals by line, and is idempotent', async (t) => {
  const dir = t.testdir({
    'events.ndjson': readFileSync(join(fixturesDir, 'events.ndjson'), 'utf8'),
    'new.ndjson': [event('n-1'), '{"message_id": "n-2"', event('n-3', { message_category: 'warning' }), '', event('e-00'), event('n-4'), event('n-1')].join('\n') + '\n'
  })
  const env = { STORE: 'memory', EVENTS_FILE: join(dir, 'events.ndjson') }
  const before = readFileSync(env.EVENTS_FILE, 'utf8')

  const first = await runIngest(join(dir, 'new.ndjson'), env)
  t.equal(first.code, 1, 'non-zero: lines were refused')
  t.match(first.stdout, '7 lines in')
  t.match(first.stdout, '2 written, 1 already stored, 3 refused')
  t.match(first.stdout, /line 2: invalid JSON/)
  t.match(first.stdout, /line 3: message_category/)
  t.match(first.stdout, /line 5: message_id "e-00" is already stored for a different event/)
  const after = readFileSync(env.EVENTS_FILE, 'utf8')
  t.equal(after.slice(0, before.length), before, 'existing lines untouched')
  t.equal(after.slice(before.length), event('n-1', { date_time: '2025-03-01T09:00:00.000Z' }) + '\n' + event('n-4', { date_time: '2025-03-01T09:00:00.000Z' }) + '\n', 'new events appended in wire form')

  const second = await runIngest(join(dir, 'new.ndjson'), env)
  t.match(second.stdout, '0 written, 3 already stored, 3 refused')
  t.equal(readFileSync(env.EVENTS_FILE, 'utf8'), after, 'a second run changes nothing')

  const app = await buildApp(testConfig({ eventsFile: env.EVENTS_FILE }))
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/svc/v2/events?start_date=2025-03-01T00:00:00Z', headers: AUTH })
  t.same(response.json().data.map((m: { message_id: string }) => m.message_id), ['n-1', 'n-4'], 'the provider serves them')
})

t.test('STORE=memory: an events file without a final line break stays valid after an ingest', async (t) => {
  const existing = readFileSync(join(fixturesDir, 'events.ndjson'), 'utf8').trimEnd()
  const dir = t.testdir({ 'events.ndjson': existing, 'new.ndjson': event('n-1') + '\n' + event('n-2') + '\n' })
  const env = { STORE: 'memory', EVENTS_FILE: join(dir, 'events.ndjson') }
  const run = await runIngest(join(dir, 'new.ndjson'), env)
  t.equal(run.code, 0, run.stdout + run.stderr)
  t.match(run.stdout, '2 written')
  t.equal(readFileSync(env.EVENTS_FILE, 'utf8'), existing + '\n' + event('n-1', { date_time: '2025-03-01T09:00:00.000Z' }) + '\n' + event('n-2', { date_time: '2025-03-01T09:00:00.000Z' }) + '\n', 'the new events start on a line of their own')
  const app = await buildApp(testConfig({ eventsFile: env.EVENTS_FILE }))
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/svc/v2/events?start_date=2025-03-01T00:00:00Z', headers: AUTH })
  t.same(response.json().data.map((m: { message_id: string }) => m.message_id), ['n-1', 'n-2'], 'the provider starts and serves them')
})

t.test('STORE=memory: an events file whose last line a crash cut short takes an ingest, without the cut line', async (t) => {
  const existing = readFileSync(join(fixturesDir, 'events.ndjson'), 'utf8')
  const torn = '{"message_id":"cut-sh'
  const dir = t.testdir({ 'events.ndjson': existing + torn, 'new.ndjson': event('n-1') + '\n' })
  const env = { STORE: 'memory', EVENTS_FILE: join(dir, 'events.ndjson') }
  const run = await runIngest(join(dir, 'new.ndjson'), env)
  t.equal(run.code, 0, run.stdout + run.stderr)
  t.match(run.stdout, '1 written')
  t.equal(readFileSync(env.EVENTS_FILE, 'utf8'), existing + event('n-1', { date_time: '2025-03-01T09:00:00.000Z' }) + '\n', 'the cut line is gone, the new event on a line of its own')
})

t.test('a line with a key given twice is refused whole', async (t) => {
  const twice = event('n-1').replace('"space_id":', '"space_id":"elsewhere","space_id":')
  const dir = t.testdir({ 'new.ndjson': twice + '\n' + event('n-2') + '\n' })
  const run = await runIngest(join(dir, 'new.ndjson'), { STORE: 'memory', EVENTS_FILE: join(dir, 'events.ndjson') })
  t.equal(run.code, 1)
  t.match(run.stdout, '1 written, 0 already stored, 1 refused')
  t.match(run.stdout, 'line 1: "space_id" is given twice')
})

t.test('a line whose bytes are not UTF-8 is refused with its number, never decoded into another event; the others, unicode too, are written', async (t) => {
  const dir = t.testdir({
    'new.ndjson': Buffer.concat([
      Buffer.from(event('caf\u00e9-1') + '\n'),
      Buffer.from(event('lat1-x').replace('lat1-x', 'lat1-\u00e9'), 'latin1'),
      Buffer.from('\r\n' + event('n-3') + '\n')
    ])
  })
  const eventsFile = join(dir, 'events.ndjson')
  const run = await runIngest(join(dir, 'new.ndjson'), { STORE: 'memory', EVENTS_FILE: eventsFile })
  t.equal(run.code, 1)
  t.match(run.stdout, '2 written, 0 already stored, 1 refused')
  t.match(run.stdout, 'line 2: invalid JSON: the line is not valid UTF-8')
  const written = readFileSync(eventsFile, 'utf8')
  t.match(written, '"message_id":"caf\u00e9-1"')
  t.notMatch(written, '\ufffd', 'no replacement character stored')
})

t.test('a clean ingest exits 0', async (t) => {
  const dir = t.testdir({ 'new.ndjson': event('n-1') + '\n' })
  const run = await runIngest(join(dir, 'new.ndjson'), { STORE: 'memory', EVENTS_FILE: join(dir, 'events.ndjson') })
  t.equal(run.code, 0)
  t.match(run.stdout, '1 written, 0 already stored, 0 refused')
})

t.test('usage and configuration errors', async (t) => {
  const noFile = await runIngest(undefined, { STORE: 'memory' })
  t.equal(noFile.code, 2)
  t.match(noFile.stderr, 'usage: npm run ingest -- FILE.ndjson')
  const missing = await runIngest('/no/such/file.ndjson', { STORE: 'memory' })
  t.equal(missing.code, 2)
  t.match(missing.stderr, '/no/such/file.ndjson: no such file')
  const badStore = await runIngest(join(fixturesDir, 'events.ndjson'), { STORE: 'influxdb', INFLUX_URL: 'http://127.0.0.1:1' })
  t.equal(badStore.code, 1)
  t.match(badStore.stderr, 'Configuration error: STORE=influxdb needs INFLUX_BUCKET (Flux, InfluxDB 2.x) or INFLUX_DATABASE (InfluxQL)')
})
