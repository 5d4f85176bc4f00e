import t from 'tap'
import { join } from 'node:path'
import { ingestFile } from '../../src/ingest/ingest-file.js'
import { eventCases } from '../contract/events-cases.js'
import { runContractCases } from '../contract/run-contract.js'
import { specificationCases } from '../contract/specification-cases.js'
import { AUTH, build, fixturesDir, storeFromEnv } from '../helper.js'
import { influxSkipReason, influxTestEnv, testInfluxServer } from './influx-server.js'

// The same contract tables as the memory store, on a real InfluxDB.
t.test('InfluxDB store', { skip: influxSkipReason() }, async (t) => {
  const server = await testInfluxServer()
  t.teardown(() => server.destroy())
  const store = storeFromEnv(influxTestEnv(server, 'contract'))

  const summary = await ingestFile(join(fixturesDir, 'events.ndjson'), store.openWriter())
  t.same(summary.refused, [], 'every fixture event is accepted')
  t.equal(summary.written, 21, 'every fixture event is written, the same-millisecond ones too')

  const influx = await build(t, { store })
  const memory = await build(t)
  const ready = await influx.inject({ url: '/health/ready' })
  t.same(ready.json(), { status: 'ok', store: { kind: `influxdb (${(store.settings as { dialect: string }).dialect})`, ready: true } }, 'ready')

  await t.test('events', async (t) => runContractCases(t, () => influx, eventCases))
  await t.test('event_specifications', async (t) => runContractCases(t, () => influx, specificationCases))

  await t.test('byte-identical to the memory store for every contract request', async (t) => {
    for (const contract of [...eventCases, ...specificationCases]) {
      const headers = contract.authorization === null ? {} : { authorization: contract.authorization ?? AUTH.authorization }
      const [a, b] = await Promise.all([memory, influx].map((app) => app.inject({ method: 'GET', url: contract.url, headers })))
      t.equal(b!.statusCode, a!.statusCode, `${contract.name}: status`)
      t.equal(b!.body, a!.body, `${contract.name}: body`)
    }
  })
})
