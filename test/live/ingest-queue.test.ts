import t from 'tap'
import { IngestQueue, LIVE_GROUP_EVENTS_MAX, type PendingIngest } from '../../src/live/ingest-queue.js'
import type { IngestEvent } from '../../src/store/event-writer.js'

const ingest = (events: number) => Array.from({ length: events }) as IngestEvent[]
const outcome = (written: number) => ({ written, unchanged: 0, refused: [], stored: [] })

t.test('ingests waiting for the lock go in groups of whole ingests up to LIVE_GROUP_EVENTS_MAX events, in order', async (t) => {
  const groups: number[][] = []
  let letGo: () => void = () => {}
  const held = new Promise<void>((resolve) => { letGo = resolve })
  const queue = new IngestQueue({
    writeGroup: async (group: readonly PendingIngest[]) => {
      groups.push(group.map(({ events }) => events.length))
      if (groups.length === 1) await held
      for (const pending of group) pending.resolve(outcome(pending.events.length))
      return undefined
    },
    exclusive: async (write) => await write(),
    onFailure: (error) => { t.fail(String(error)) }
  })
  const part = Math.ceil(LIVE_GROUP_EVENTS_MAX * 0.4)
  const first = queue.ingest(ingest(1))
  await new Promise((resolve) => setImmediate(resolve))
  // While the first group is written, three large ingests and a small one wait.
  const later = [part, part + 1, part, 10].map((events) => queue.ingest(ingest(events)))
  letGo()
  const written = await Promise.all([first, ...later])
  t.same(written.map((w) => w.written), [1, part, part + 1, part, 10])
  t.same(groups, [[1], [part, part + 1], [part, 10]], 'two ingests of 40% together, the third after them with the small one')
  const alone = await queue.ingest(ingest(LIVE_GROUP_EVENTS_MAX + 1))
  t.equal(alone.written, LIVE_GROUP_EVENTS_MAX + 1, 'a larger ingest goes alone')
})

t.test('a group the store failed for its own sake fails the ingests waiting behind it at once; a lock that fails fails its group only', async (t) => {
  const unavailable = new Error('store unavailable')
  let calls = 0
  let letGo: () => void = () => {}
  const held = new Promise<void>((resolve) => { letGo = resolve })
  const queue = new IngestQueue({
    writeGroup: async (group: readonly PendingIngest[]) => {
      calls++
      await held
      for (const pending of group) pending.reject(unavailable)
      return unavailable
    },
    exclusive: async (write) => await write(),
    onFailure: (error) => { t.fail(String(error)) },
    maxEvents: 10
  })
  const first = queue.ingest(ingest(8))
  await new Promise((resolve) => setImmediate(resolve))
  const behind = [queue.ingest(ingest(8)), queue.ingest(ingest(8))]
  letGo()
  const settled = await Promise.allSettled([first, ...behind])
  t.same(settled.map((s) => s.status === 'rejected' && s.reason === unavailable), [true, true, true])
  t.equal(calls, 1, 'those behind were not written')
  const lockFails = new IngestQueue({
    writeGroup: async () => { t.fail('written without the lock'); return undefined },
    exclusive: async () => { throw new Error('no primary') },
    onFailure: (error) => { t.fail(String(error)) }
  })
  await t.rejects(lockFails.ingest(ingest(1)), { message: 'no primary' })
})
