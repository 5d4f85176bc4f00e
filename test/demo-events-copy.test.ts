import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { MessageRecord } from '../schemas/message.js'
import { demoDataDir } from '../src/project-root.js'
import { memoryStore } from '../src/store/memory/index.js'
import { demoCopyDaysBehind, demoShiftDays, makeDemoEventsCopy } from '../src/store/memory/demo-events-copy.js'
import { loadMemoryEventStore } from '../src/store/memory/load-memory-store.js'

const DAY_MS = 86_400_000
const SEED = join(demoDataDir, 'events.ndjson')

function readEvents (text: string): MessageRecord[] {
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as MessageRecord)
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

t.test('the shift puts the last event on the day before today, in whole days', async (t) => {
  const last = Date.parse('2026-10-31T18:55:15.977Z')
  t.equal(demoShiftDays(last, Date.parse('2026-11-23T05:00:00Z')), 22)
  t.equal(demoShiftDays(last, Date.parse('2026-11-01T00:00:00Z')), 0, 'the day after the data: as it is')
  t.equal(demoShiftDays(last, Date.parse('2026-11-01T23:59:59.999Z')), 0)
  t.equal(demoShiftDays(last, Date.parse('2026-10-15T12:00:00Z')), -17, 'a clock before the data moves it back')
})

for (const [name, nowMs] of [['today', Date.now()], ['a day of another year', Date.parse('2031-03-05T23:59:59.999Z')]] as const) {
  t.test(`the working copy of the bundled events ends yesterday (${name}) and keeps IDs, order and spacing`, async (t) => {
    const copyFile = join(t.testdir(), 'events.ndjson')
    const made = await makeDemoEventsCopy(SEED, copyFile, nowMs)
    const seed = readEvents(await readFile(SEED, 'utf8'))
    const copy = readEvents(await readFile(copyFile, 'utf8'))

    const yesterday = dayOf(nowMs - DAY_MS)
    t.equal(copy.at(-1)!.date_time.slice(0, 10), yesterday, 'the last event is on the day before today (UTC)')
    t.equal(made.lastDateTime, copy.at(-1)!.date_time)
    t.equal(made.firstDateTime, copy[0]!.date_time)
    t.equal(made.events, seed.length)
    t.ok(copy.every((event) => Date.parse(event.date_time) < nowMs), 'every event is earlier than now')

    t.same(copy.map((event) => event.message_id), seed.map((event) => event.message_id), 'the same IDs, in the same order')
    const shift = made.shiftDays * DAY_MS
    t.ok(copy.every((event, i) => Date.parse(event.date_time) - Date.parse(seed[i]!.date_time) === shift), 'every event moved by the same whole days')
    t.same(copy.map(({ date_time: _, ...rest }) => rest), seed.map(({ date_time: _, ...rest }) => rest), 'every other field as it was')
    t.ok(copy.every((event) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(event.date_time)), 'the wire form of a time')

    const store = await loadMemoryEventStore(copyFile)
    t.equal(store.size, seed.length, 'the provider loads every event of it')
  })
}

t.test('the demo store makes the copy once, keeps it on later days, and says how far behind it is', async (t) => {
  const eventsFile = join(t.testdir(), 'var', 'events.ndjson')
  const settings = { eventsFile, seedFile: SEED }
  const logs: { level: string, details: Record<string, unknown>, message: string }[] = []
  const log = {
    info: (details: object, message: string) => { logs.push({ level: 'info', details: details as Record<string, unknown>, message }) },
    warn: (details: object, message: string) => { logs.push({ level: 'warn', details: details as Record<string, unknown>, message }) }
  }

  const first = await memoryStore.open(settings, { log })
  await first.close()
  const copy = readEvents(await readFile(eventsFile, 'utf8'))
  t.equal(copy.at(-1)!.date_time.slice(0, 10), dayOf(Date.now() - DAY_MS), 'made on first use, ending yesterday')
  t.ok(logs.some((entry) => entry.message.startsWith('the demo events, moved in time')), 'the copy is logged')
  t.equal(await demoCopyDaysBehind(SEED, eventsFile, Date.now()), 0, 'a copy of today is not behind')

  // A copy made three days ago, with an event ingested since.
  await makeDemoEventsCopy(SEED, eventsFile, Date.now() - 3 * DAY_MS)
  const ingested = '{"message_id":"ingested-1","message_code":"DISP_EMPTY","message_category":"alert","date_time":"2026-01-01T00:00:00.000Z","device_id":"soap-00004","space_id":"ams-hq/f01/kitchen-1"}\n'
  await writeFile(eventsFile, ingested, { flag: 'a' })
  const before = await readFile(eventsFile)
  logs.length = 0
  const later = await memoryStore.open(settings, { log })
  await later.close()
  t.ok((await readFile(eventsFile)).equals(before), 'an existing copy is kept as it is (ingested events live in it)')
  t.match(logs.find((entry) => entry.details.daysBehind !== undefined), { level: 'info', details: { file: eventsFile, daysBehind: 3 }, message: /delete var\// },
    'the log says how far behind it is and how to refresh it')

  t.equal(await demoCopyDaysBehind(SEED, join(demoDataDir, 'entities.json'), Date.now()), undefined, 'a file that is not a copy of the seed: no opinion')
})

t.test('EVENTS_FILE set: the file is served as it is, never moved in time', async (t) => {
  const eventsFile = join(t.testdir(), 'events.ndjson')
  const text = '{"message_id":"a","message_code":"X","message_category":"alert","date_time":"2020-01-01T00:00:00.000Z","space_id":"s"}\n'
  await writeFile(eventsFile, text)
  const store = await memoryStore.open({ eventsFile, seedFile: undefined }, { log: { info () {}, warn () {} } })
  await store.close()
  t.equal(await readFile(eventsFile, 'utf8'), text)
})
