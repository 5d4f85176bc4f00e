import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { eventCases } from './contract/events-cases.js'
import { runContractCases } from './contract/run-contract.js'
import { notImplementedCases, specificationCases } from './contract/specification-cases.js'
import { build } from './helper.js'

// The contract tables on the memory store; test/influx/*.test.ts runs the same tables on InfluxDB.
t.test('memory store', async (t) => {
  const app: FastifyInstance = await build(t)
  await t.test('events', async (t) => runContractCases(t, () => app, eventCases))
  await t.test('event_specifications', async (t) => runContractCases(t, () => app, specificationCases))
})

t.test('SPECIFICATIONS_FILE=none', async (t) => {
  const app = await build(t, { specificationsFile: undefined })
  await runContractCases(t, () => app, notImplementedCases)
})
