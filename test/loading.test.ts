import t from 'tap'
import { join } from 'node:path'
import { serverOptions } from '../src/app.js'
import { loadMemoryEventStore, type LoadProgress } from '../src/store/memory/load-memory-store.js'
import { fixturesDir, testConfig } from './helper.js'

t.test('loading the memory store is bounded by no framework timeout', async (t) => {
  // Fastify's default (10 s) stopped a million-event start on a busy machine with FST_ERR_PLUGIN_TIMEOUT.
  t.equal(serverOptions(testConfig()).pluginTimeout, 0)
})

t.test('a load reports its progress as it reads', async (t) => {
  const reports: LoadProgress[] = []
  const store = await loadMemoryEventStore(join(fixturesDir, 'events.ndjson'), (progress) => reports.push(progress), 5)
  t.same(reports.map((report) => report.lines), [5, 10, 15, 20], 'every 5 lines of the 21-line fixture')
  t.ok(reports.every((report) => report.seconds >= 0))
  t.equal(store.size, 21)
})
