import t from 'tap'
import type { Message } from '../schemas/message.js'
import { jsonBytesOf } from '../src/data/json-bytes.js'
import type { IngestEvent } from '../src/store/event-writer.js'
import type { InfluxBackend } from '../src/store/influx/influx-backend.js'
import { InfluxEventWriter, MAX_UNCERTAIN_EVENTS, type IndexAnswer } from '../src/store/influx/influx-event-writer.js'

// The bound is a count of failed events, which a real InfluxDB behind the write proxy
// (test/influx/influx-store.test.ts) would take minutes to fill: a stand-in backend, named as
// such, whose writes fail on cue (those of index points only, when `indexOnly`) and which
// records the milliseconds the writer reads.
function standInBackend (): { backend: InfluxBackend, failWrites: { now: boolean, indexOnly: boolean }, readAt: number[] } {
  const failWrites = { now: true, indexOnly: false }
  const readAt: number[] = []
  const backend: InfluxBackend = {
    dialect: 'influxql',
    knownEventsSource: undefined,
    queryEvents: async function * () {},
    indexedEvents: async function * () {},
    indexPoints: async function * () {},
    pointsBetween: async function * (startMs: number) { readAt.push(startMs) },
    write: async (lines) => {
      const ofIndex = lines[0]!.includes(',id_hash=')
      if (failWrites.now && (ofIndex || !failWrites.indexOnly)) throw new Error('stand-in: the connection was cut')
    },
    ping: async () => {},
    prepareForWrites: async () => {},
    close: async () => {}
  }
  return { backend, failWrites, readAt }
}

const T = Date.UTC(2026, 0, 1)
const eventOf = (id: string, epochMs: number, code = 'EMPTY'): IngestEvent => {
  const message: Message = { message_id: id, message_code: code, message_category: 'alert', date_time: new Date(epochMs).toISOString(), device_id: 'd', space_id: 's' }
  return { event: { message, epochMs }, line: 1, json: jsonBytesOf(JSON.stringify(message)) }
}
const nothingIndexed: IndexAnswer = { byId: new Map(), held: new Map() }

t.test(`the events of failed writes are remembered, ${MAX_UNCERTAIN_EVENTS} at most, the oldest forgotten first`, async (t) => {
  const { backend, failWrites, readAt } = standInBackend()
  const writer = new InfluxEventWriter(backend, 'events')
  // Every event point sent, the index points' write failing: every event of the batch uncertain.
  failWrites.indexOnly = true
  const failed = Array.from({ length: MAX_UNCERTAIN_EVENTS + 1 }, (_, i) => eventOf(`u-${i}`, T + i))
  await t.rejects(writer.writeLookedUp(failed, nothingIndexed), /stand-in/)
  failWrites.now = false
  const outcome = await writer.writeLookedUp([eventOf('u-0', T + 5_000_000, 'OTHER'), eventOf('u-1', T + 5_000_001, 'OTHER')], nothingIndexed)
  t.same(readAt, [T + 1], 'only the remembered one is sought where it was written: the oldest is forgotten')
  t.equal(outcome.written, 2, 'neither found stored (the stand-in holds nothing): both written')
  readAt.length = 0
  await writer.writeLookedUp([eventOf('u-1', T + 1)], nothingIndexed)
  t.same(readAt, [], 'written since, it is no longer uncertain: not read for again')
})

t.test('of a batch whose write fails, the events of the runs never sent are not uncertain', async (t) => {
  const { backend, failWrites, readAt } = standInBackend()
  const writer = new InfluxEventWriter(backend, 'events')
  // 12,000 events: runs of 5,000 lines; the first write fails, the two runs after it are never sent.
  const failed = Array.from({ length: 12_000 }, (_, i) => eventOf(`runs-${i}`, T + i))
  await t.rejects(writer.writeLookedUp(failed, nothingIndexed), /stand-in/)
  failWrites.now = false
  await writer.writeLookedUp(failed, nothingIndexed)
  t.equal(readAt.length, 5000, 'only the first run\'s milliseconds are read')
  t.equal(readAt.at(-1), T + 4999)
})

t.test('a dialect that reads many milliseconds at once is asked once for them all', async (t) => {
  const { backend, failWrites, readAt } = standInBackend()
  const asked: number[][] = []
  backend.pointsAt = async function * (milliseconds: readonly number[]) { asked.push([...milliseconds]) }
  const writer = new InfluxEventWriter(backend, 'events')
  const failed = Array.from({ length: 5000 }, (_, i) => eventOf(`many-${i}`, T + i))
  await t.rejects(writer.writeLookedUp(failed, nothingIndexed), /stand-in/)
  failWrites.now = false
  const outcome = await writer.writeLookedUp(failed, nothingIndexed)
  t.equal(outcome.written, 5000)
  t.equal(asked.length, 1, 'one call')
  t.equal(asked[0]?.length, 5000, 'with every millisecond')
  t.same(readAt, [], 'none one by one')
})
