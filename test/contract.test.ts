import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { ingestFile } from '../src/ingest/ingest-file.js'
import { storeDescriptors } from '../src/store/stores.js'
import { eventCases } from './contract/events-cases.js'
import { runContractCases } from './contract/run-contract.js'
import { notImplementedCases, specificationCases } from './contract/specification-cases.js'
import { AUTH, build, fixturesDir, INGEST_AUTH, storeFromEnv } from './helper.js'
import { SseClient } from './live/sse-client.js'
import type { StoreProvision } from './stores/store-provision.js'

// The contract tables, on every store of the descriptor table (src/store/stores.ts): each gets
// the fixture events through its own writer, answers every case, and answers every request
// byte for byte as the first store does.
const answers: Array<{ name: string, app: FastifyInstance }> = []

const root = t
for (const descriptor of storeDescriptors) {
  t.test(`${descriptor.name} store`, async (t) => {
    const provision = (await import(`./stores/${descriptor.name}.js`)).default as StoreProvision
    const env = await provision(t)
    if ('skip' in env) {
      t.skip(env.skip, () => {})
      return
    }
    const store = storeFromEnv(env)
    t.equal(store.name, descriptor.name)
    const summary = await ingestFile(join(fixturesDir, 'events.ndjson'), store.openWriter())
    t.same(summary.refused, [], 'every fixture event is accepted')
    t.equal(summary.written, 21, 'every fixture event is written, the same-millisecond ones too')

    // Kept open until every store has run: the later ones compare their answers with the first.
    const app = await build(root, { store })
    const ready = await app.inject({ url: '/health/ready' })
    t.same(ready.json(), { status: 'ok' }, 'ready')

    await t.test('events', async (t) => runContractCases(t, () => app, eventCases))
    await t.test('event_specifications', async (t) => runContractCases(t, () => app, specificationCases))

    await t.test('a message_id already stored is refused for any other event, even a millisecond apart, however far in time', async (t) => {
      const fixtures = readFileSync(join(fixturesDir, 'events.ndjson'), 'utf8').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, string>)
      const stored = (id: string) => fixtures.find((event) => event.message_id === id)!
      const moved = (id: string, byMs: number) => ({ ...stored(id), date_time: new Date(Date.parse(stored(id).date_time!) + byMs).toISOString() })
      const file = join(t.testdir(), 'again.ndjson')
      writeFileSync(file, [moved('e-00', 1), moved('e-00', -1), moved('e-13', 400 * 86_400_000), { ...stored('e-03'), message_code: 'OTHER' }, stored('e-01')].map((line) => JSON.stringify(line)).join('\n') + '\n')
      const again = await ingestFile(file, store.openWriter())
      t.same(again.refused.map((refusal) => refusal.line), [1, 2, 3, 4], 'moved in time or changed: refused')
      t.match(again.refused[0]?.reason, 'message_id "e-00" is already stored for a different event')
      t.equal(again.unchanged, 1, 'the same event again is unchanged')
      t.equal(again.written, 0)
    })

    await t.test('ingest over HTTP, read your writes, and the stream', async (t) => {
      await app.listen({ port: 0, host: '127.0.0.1' })
      const address = app.server.address() as { port: number }
      const client = new SseClient(`http://127.0.0.1:${address.port}/svc/v2/events/stream?space_ids=bldg-a/floor-1`, AUTH)
      t.teardown(() => client.close())
      await client.until((c) => c.status === 200)
      const fresh = { message_id: 'live-contract-1', message_code: 'EMPTY', message_category: 'alert', date_time: '2025-01-05T06:07:08.009+01:00', device_id: 'soap-001', space_id: 'bldg-a/floor-1' }
      const body = [
        fresh,
        JSON.parse(readFileSync(join(fixturesDir, 'events.ndjson'), 'utf8').split('\n')[0]!),
        { ...fresh, message_id: 'e-00' },
        { ...fresh, message_id: 'live-contract-2', device_id: 'ghost' },
        { ...fresh, message_id: 'live-contract-3', date_time: 'soon' }
      ].map((line) => JSON.stringify(line)).join('\n')
      const post = () => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: body })
      const answer = await post()
      t.equal(answer.statusCode, 200)
      t.same(answer.json(), {
        written: 1,
        unchanged: 1,
        refused: [
          { line: 3, reason: 'message_id "e-00" is already stored for a different event' },
          { line: 4, reason: 'device "ghost" is not in the entities file' },
          { line: 5, reason: answer.json().refused[2]?.reason }
        ]
      })
      t.match(answer.json().refused[2]?.reason, /date_time/)
      t.same((await post()).json().written, 0, 'posting again writes nothing')
      const read = await app.inject({ url: '/svc/v2/events?start_date=2025-01-05T00:00:00Z&end_date=2025-01-06T00:00:00Z&message_ids=live-contract-1', headers: AUTH })
      t.equal(read.body, '{"data":[{"message_id":"live-contract-1","message_code":"EMPTY","message_category":"alert","date_time":"2025-01-05T05:07:08.009Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}],"errors":[]}', 'read your writes')
      await client.until((c) => c.messages.length === 1)
      t.equal(client.messages[0]!.data, read.body.slice('{"data":['.length, -'],"errors":[]}'.length), 'pushed byte for byte as served')
    })

    await t.test('concurrent ingests of overlapping batches: each event stored once, the same answers on every store', async (t) => {
      const line = (i: number, code = 'EMPTY') => JSON.stringify({ message_id: `conc-${i}`, message_code: code, message_category: 'alert', date_time: new Date(Date.UTC(2025, 1, 1) + i).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1' })
      const bodies = [
        Array.from({ length: 30 }, (_, i) => line(i)),
        Array.from({ length: 30 }, (_, i) => line(i + 15)),
        Array.from({ length: 30 }, (_, i) => line(i + 30)),
        [line(5, 'OTHER'), line(60)]
      ]
      const answers = await Promise.all(bodies.map((body) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: body.join('\n') })))
      const results = answers.map((answer) => answer.json() as { written: number, unchanged: number, refused: unknown[] })
      t.equal(results.reduce((sum, r) => sum + r.written, 0), 61, 'conc-0 to conc-60, each written once')
      t.equal(results.reduce((sum, r) => sum + r.unchanged, 0), 30, 'the overlaps are unchanged')
      t.equal(results[3]!.refused.length, 1, 'a different event under a taken ID is refused')
      const read = await app.inject({ url: '/svc/v2/events?start_date=2025-02-01T00:00:00Z&end_date=2025-02-02T00:00:00Z', headers: AUTH })
      t.same(read.json().data.map((message: { message_id: string }) => message.message_id).filter((id: string) => id.startsWith('conc-')), Array.from({ length: 61 }, (_, i) => `conc-${i}`), 'each once, in order')
    })

    const first = answers[0]
    if (first === undefined) {
      answers.push({ name: descriptor.name, app })
      return
    }
    await t.test(`byte-identical to the ${first.name} store for every contract request`, async (t) => {
      for (const contract of [...eventCases, ...specificationCases]) {
        const headers = contract.authorization === null ? {} : { authorization: contract.authorization ?? AUTH.authorization }
        const [a, b] = await Promise.all([first.app, app].map((app) => app.inject({ method: 'GET', url: contract.url, headers })))
        t.equal(b!.statusCode, a!.statusCode, `${contract.name}: status`)
        t.equal(b!.body, a!.body, `${contract.name}: body`)
      }
    })
  })
}

t.test('every store in the table has a test provision', async (t) => {
  for (const { name } of storeDescriptors) {
    const provision = (await import(`./stores/${name}.js`)).default as unknown
    t.type(provision, 'function', `test/stores/${name}.ts`)
  }
})

t.test('SPECIFICATIONS_FILE=none', async (t) => {
  const app = await build(t, { specificationsFile: undefined })
  await runContractCases(t, () => app, notImplementedCases)
})
