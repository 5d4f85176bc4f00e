import t from 'tap'
import fc from 'fast-check'
import { EventLog, MAX_SINCE_FILTERED } from '../src/live/event-log.js'
import type { LiveEvent } from '../src/live/live-event.js'
import { encodeMessage } from '../src/store/message-json.js'

const T0 = Date.UTC(2025, 0, 1)
const live = (seq: number, ms: number): LiveEvent => {
  const message: LiveEvent['message'] = { message_id: `m${seq}`, message_code: 'C', message_category: 'alert', date_time: new Date(T0 + ms).toISOString(), space_id: 's' }
  return { seq, message, json: encodeMessage(message) }
}
const ids = (resumed: ReturnType<EventLog['resume']>) => 'events' in resumed ? [...resumed.events].map((event) => event.seq) : resumed

t.test('resume: the events after the cursor; the head cursor resumes with nothing', async (t) => {
  const log = new EventLog('abc', { events: 100, ms: Infinity })
  t.equal(log.headCursor, 'abc-0')
  log.append([live(1, 0), live(2, 1000), live(3, 2000)])
  t.same(ids(log.resume('abc-1')), [2, 3])
  t.same(ids(log.resume('abc-0')), [1, 2, 3])
  t.same(ids(log.resume(log.headCursor)), [])
})

t.test('a cursor of another log, from the future, or malformed: a reset', async (t) => {
  const log = new EventLog(T0.toString(36), { events: 100, ms: Infinity })
  log.append([live(1, 5 * 60_000)])
  for (const cursor of ['other-1', `${T0.toString(36)}-9`, 'garbage', `${T0.toString(36)}-x`]) {
    const resumed = log.resume(cursor)
    t.ok('since' in resumed, cursor)
  }
  t.same(log.resume('other-1'), { since: new Date(T0).toISOString() }, 'from the log\'s own beginning at the latest')
})

t.test('a cursor of an earlier run (a restart) or of another instance: since no later than the moment that run began', async (t) => {
  const restartedAt = T0 + 60 * 60_000
  const log = new EventLog(restartedAt.toString(36), { events: 100, ms: Infinity })
  log.append([live(1, 70 * 60_000)])
  const earlierRun = T0 + 10 * 60_000 + 12_345
  // The client saw events of the earlier run up to its cursor; what that run accepted after it is
  // not known here, but it came after the run began.
  t.same(log.resume(`${earlierRun.toString(36)}-42`), { since: new Date(T0 + 10 * 60_000).toISOString() }, 'the earlier run\'s start, to the minute')
  t.same(log.resume(`${(Date.now() + 3_600_000).toString(36)}-1`), { since: new Date(restartedAt).toISOString() }, 'a run that would begin in the future: as a cursor it cannot place')
  t.same(log.resume('garbage'), { since: new Date(restartedAt).toISOString() }, 'garbage: from this run\'s beginning')
})

t.test('dropped by count or age: a reset since the earliest date_time after the cursor, to the minute', async (t) => {
  const log = new EventLog('abc', { events: 3, ms: Infinity })
  log.append([live(1, 10 * 60_000), live(2, 3 * 60_000 + 5000), live(3, 20 * 60_000), live(4, 30 * 60_000), live(5, 40 * 60_000)])
  t.equal(log.size, 3)
  t.same(log.resume('abc-0'), { since: new Date(T0 + 3 * 60_000).toISOString() }, 'the earliest of the dropped (floored) and the kept')
  t.same(log.resume('abc-1'), { since: new Date(T0 + 3 * 60_000).toISOString() })
  t.same(ids(log.resume('abc-2')), [3, 4, 5], 'nothing after it was dropped')

  const aged = new EventLog('abc', { events: 100, ms: 1000 })
  aged.append([live(1, 0)], 0)
  aged.append([live(2, 60_000)], 5000)
  t.equal(aged.size, 1, 'the one accepted over a second ago is gone')
  t.ok('since' in aged.resume('abc-0', 5000))
})

t.test('a reset\'s since counts only the kept events the stream keeps: the others\' times are not its client\'s to learn', async (t) => {
  const log = new EventLog(T0.toString(36), { events: 100, ms: Infinity })
  const message: LiveEvent['message'] = { ...live(1, 0).message, date_time: new Date(T0 - 3_600_000 + 1234).toISOString(), space_id: 'theirs' }
  // A late event (dated an hour before the log began) of a space the stream does not cover.
  log.append([{ seq: 1, message, json: encodeMessage(message) }, live(2, 5 * 60_000 + 250)])
  const mine = (message: { space_id?: string }) => message.space_id === 's'
  t.same(log.resume('other-1', Date.now(), mine), { since: new Date(T0).toISOString() }, 'a foreign cursor: the log\'s beginning, not the late event of another space')
  t.same(log.resume(`${T0.toString(36)}-9`, Date.now(), mine), { since: new Date(T0).toISOString() }, 'a cursor past the end: the same')
  t.same(log.resume('other-1'), { since: new Date(T0 - 3_600_000 + 1234).toISOString() }, 'without a filter, every kept event counts')

  // Past MAX_SINCE_FILTERED such events, the rest count unfiltered, to the minute, as dropped ones do.
  const crowded = new EventLog(T0.toString(36), { events: MAX_SINCE_FILTERED + 100, ms: Infinity })
  const theirs = (seq: number, ms: number): LiveEvent => {
    const late: LiveEvent['message'] = { ...live(seq, 0).message, date_time: new Date(T0 + ms).toISOString(), space_id: 'theirs' }
    return { seq, message: late, json: encodeMessage(late) }
  }
  crowded.append(Array.from({ length: MAX_SINCE_FILTERED + 1 }, (_, i) => theirs(i + 1, -3_600_000 + 30_000 - i)))
  const lastOfThem = -3_600_000 + 30_000 - MAX_SINCE_FILTERED
  t.same(crowded.resume('other-1', Date.now(), mine), { since: new Date(T0 + Math.floor(lastOfThem / 60_000) * 60_000).toISOString() }, 'the one past the bound, to the minute')
})

t.test('a long run keeps a bounded summary and stays correct', async (t) => {
  const log = new EventLog('abc', { events: 10, ms: Infinity })
  for (let seq = 1; seq <= 5000; seq++) log.append([live(seq, seq * 60_000)])
  t.equal(log.size, 10)
  t.same(log.resume('abc-4000'), { since: new Date(T0 + 4001 * 60_000).toISOString() })
  t.same(ids(log.resume('abc-4995')), [4996, 4997, 4998, 4999, 5000])
})

t.test('since, from dropped events in many minutes, wire-form and with an offset: the same as parsing each', async (t) => {
  const log = new EventLog('abc', { events: 5, ms: Infinity })
  // Many events per minute (the minute is parsed once per minute), then one in +02:00, and
  // minutes going back (a late event): each reset names the earliest minute after its cursor.
  const times = [0, 10, 59_999, 60_000, 61_000, 119_999, 125_000, 30_000, 180_000, 181_000, 240_500]
  const events = times.map((ms, i) => live(i + 1, ms))
  events[6] = { ...events[6]!, message: { ...events[6]!.message, date_time: '2025-01-01T02:02:05.000+02:00' } }
  log.append(events)
  for (let cursor = 0; cursor < times.length - 5; cursor++) {
    // Dropped events (the first 6) count by their minute, kept ones by their own time.
    const later = times.map((ms, i) => i < 6 ? Math.floor(ms / 60_000) * 60_000 : ms).slice(cursor)
    const earliest = Math.min(...later)
    t.same(log.resume(`abc-${cursor}`), { since: new Date(T0 + earliest).toISOString() }, `after ${cursor}`)
  }
})

t.test('a resumed event\'s JSON is the JSON it was accepted with, its message read from it (the log keeps bytes, no message)', async (t) => {
  const log = new EventLog('abc', { events: 100, ms: Infinity })
  const message: LiveEvent['message'] = { message_id: 'm-é', message_code: 'C', message_category: 'notification', date_time: '2025-01-01T00:00:00.000Z', device_id: 'd', space_id: 's/1' }
  const wire = encodeMessage(message)
  const ingested = live(2, 1000)
  const body = Buffer.from(`xx${ingested.json}yy`)
  // One as text (another worker's), one as a view of the bytes it came in (an ingest's), with its time.
  log.append([{ seq: 1, message, json: wire }, { seq: 2, get message (): never { throw new Error('an ingest\'s message is not read') }, json: 'not read either', epochMs: T0 + 1000, bytes: { bytes: body, start: 2, end: body.length - 2 } }])
  body.fill(0)
  const resumed = log.resume('abc-0')
  t.ok('events' in resumed)
  if (!('events' in resumed)) return
  const events = [...resumed.events]
  t.same(events.map(({ seq }) => seq), [1, 2])
  t.equal(events[0]!.json, '{"message_id":"m-é","message_code":"C","message_category":"notification","date_time":"2025-01-01T00:00:00.000Z","device_id":"d","space_id":"s/1"}')
  t.same(events[0]!.message, message)
  t.equal(events[1]!.json, ingested.json, 'copied, not a view of the body (changed since)')
  t.same(events[1]!.message, ingested.message)
})

t.test('a retention smaller than one append keeps the last events of it, readable', async (t) => {
  const log = new EventLog('abc', { events: 2, ms: Infinity })
  log.append([live(1, 0), live(2, 1000), live(3, 2000)])
  log.append([live(4, 3000), live(5, 4000), live(6, 5000), live(7, 6000)])
  const resumed = log.resume('abc-5')
  t.ok('events' in resumed)
  if ('events' in resumed) t.same([...resumed.events].map(({ message }) => message.message_id), ['m6', 'm7'])
  t.same(log.resume('abc-0'), { since: new Date(T0).toISOString() })
})

t.test('the log\'s ring, growing and wrapping, resumes as a plain list of the last events would', async (t) => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 3000 }), fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 6000 }), (keep, chunks, cursorSeed) => {
    const log = new EventLog('abc', { events: keep, ms: Infinity })
    let seq = 0
    for (const size of chunks) log.append(Array.from({ length: size }, () => { seq++; return live(seq, seq * 1000) }))
    const kept = Math.min(keep, seq)
    if (log.size !== kept) return false
    const cursor = cursorSeed % (seq + 1)
    const resumed = log.resume(`abc-${cursor}`)
    const firstKept = seq - kept + 1
    if (cursor < firstKept - 1) return 'since' in resumed
    if (!('events' in resumed)) return false
    const events = [...resumed.events]
    return events.length === seq - cursor && events.every((event, i) => event.seq === cursor + 1 + i && event.message.message_id === `m${cursor + 1 + i}`)
  }), { numRuns: 300 })
})

t.test('events dropped by age from a ring that has wrapped', async (t) => {
  const log = new EventLog('abc', { events: 1500, ms: 10_000 })
  let seq = 0
  for (let second = 0; second < 40; second++) log.append(Array.from({ length: 100 }, () => { seq++; return live(seq, seq) }), second * 1000)
  t.equal(log.size, 1100, 'the events of the last 10 s and of its first instant (100 a second; the ring holds 1,500)')
  const resumed = ids(log.resume('abc-3500', 39_000))
  t.same(Array.isArray(resumed) ? resumed.slice(0, 2) : resumed, [3501, 3502])
  t.ok('since' in log.resume('abc-2000', 39_000))
  log.append([live(seq + 1, seq + 1)], 100_000)
  t.equal(log.size, 1, 'everything older than 10 s dropped')
})

t.test('a resume hands out only the events its filter keeps', async (t) => {
  const log = new EventLog('abc', { events: 100, ms: Infinity })
  log.append(Array.from({ length: 10 }, (_, i) => live(i + 1, i * 1000)))
  const resumed = log.resume('abc-2', Date.now(), (message) => Number(message.message_id.slice(1)) % 2 === 0)
  t.same(ids(resumed), [4, 6, 8, 10])
})

t.test('the JSON of dropped events is let go: what the log holds follows its retention, and reused chunks serve the right events', async (t) => {
  const log = new EventLog('abc', { events: 1000, ms: Infinity })
  // 400-byte events: a 1 MiB chunk holds about 2,600, the retention spans one or two chunks.
  const big = (seq: number): LiveEvent => {
    const message: LiveEvent['message'] = { message_id: `m${seq}-${'x'.repeat(300)}`, message_code: 'C', message_category: 'alert', date_time: new Date(T0 + seq).toISOString(), space_id: 's' }
    return { seq, message, json: encodeMessage(message) }
  }
  let seq = 0
  for (let round = 0; round < 200; round++) log.append(Array.from({ length: 500 }, () => big(++seq)))
  t.ok(log.chunksKept <= 2 + 4, `${log.chunksKept} chunks for 1,000 kept events of 100,000 appended`)
  const resumed = log.resume(`abc-${seq - 1000}`)
  t.ok('events' in resumed)
  if ('events' in resumed) {
    const events = [...resumed.events]
    t.equal(events.length, 1000)
    t.ok(events.every((event, i) => event.json === big(seq - 999 + i).json && event.message.message_id === big(seq - 999 + i).message.message_id), 'each its own JSON, after many chunks were reused')
  }
})

t.test('an ingest\'s events copied by runs of one body\'s lines: each resumes as its own JSON, lines left out, CRs, chunk ends and drops between them', async (t) => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.boolean(), fc.oneof(fc.integer({ min: 0, max: 900 }), fc.integer({ min: 20_000, max: 60_000 }))), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 80 }), (lines, appends, retention) => {
    const log = new EventLog('abc', { events: retention, ms: Infinity })
    const events = lines.map(([, , padding], i) => live(i + 1, i).message).map((message, i) => ({ ...message, message_id: `${message.message_id}-${'p'.repeat(lines[i]![2])}` }))
    const texts = events.map((message) => encodeMessage(message))
    const body = Buffer.from(texts.map((text, i) => text + (lines[i]![1] ? '\r\n' : '\n')).join(''))
    let at = 0
    const kept: LiveEvent[] = []
    texts.forEach((text, i) => {
      const end = at + Buffer.byteLength(text)
      if (lines[i]![0]) kept.push({ seq: kept.length + 1, get message (): never { throw new Error('not read') }, json: 'not read', epochMs: T0 + i, bytes: { bytes: body, start: at, end } })
      at = end + (lines[i]![1] ? 2 : 1)
    })
    const per = Math.ceil(kept.length / appends)
    for (let i = 0; i < kept.length; i += per) log.append(kept.slice(i, i + per))
    body.fill(0x21)
    // The last `retention` of them are kept (older chunks let go and reused meanwhile).
    const expected = texts.filter((_, i) => lines[i]![0]).slice(-retention)
    const resumed = log.resume(`abc-${kept.length - expected.length}`)
    if (!('events' in resumed)) return false
    const read = [...resumed.events]
    if (read.length !== expected.length) return false
    return read.every((event, i) => event.json === expected[i] && event.message.message_id === (JSON.parse(expected[i]!) as { message_id: string }).message_id)
  }), { numRuns: 200 })
})

t.test('a resume\'s events are made as they are read, not all at once; one the log drops before it is read ends the reading, said', async (t) => {
  const log = new EventLog('abc', { events: 5, ms: Infinity })
  log.append([1, 2, 3, 4, 5].map((seq) => live(seq, seq * 1000)))
  let asked = 0
  const resumed = log.resume('abc-0', Date.now(), () => { asked++; return true })
  t.equal(asked, 0, 'nothing read before the first event is asked for')
  if (!('events' in resumed)) throw new Error('a resume was expected')
  const read: number[] = []
  for (const event of resumed.events) {
    read.push(event.seq)
    // The client is slow: meanwhile five more are accepted, and the log keeps five.
    if (event.seq === 2) log.append([6, 7, 8, 9, 10].map((seq) => live(seq, seq * 1000)))
  }
  t.same(read, [1, 2], 'the rest was dropped before it was read')
  t.equal(asked, 2, 'each event read when reached')
  t.ok(resumed.events.overtaken, 'overtaken: the stream ends, and its next resume gets a reset')
  t.ok(resumed.events.done, 'and nothing more is owed')
  t.same([...resumed.events], [], 'a resume is read once')
  const whole = log.resume('abc-5')
  t.ok('events' in whole && [...whole.events].length === 5 && !whole.events.overtaken, 'a resume read in time is whole')
})

t.test('a resume is read a slice at a time: each slice reads at most so many of the log\'s events, however few its filter keeps', async (t) => {
  const log = new EventLog('abc', { events: 100, ms: Infinity })
  log.append(Array.from({ length: 10 }, (_, i) => live(i + 1, (i + 1) * 1000)))
  let asked = 0
  const resumed = log.resume('abc-2', Date.now(), (message) => { asked++; return message.message_id === 'm5' || message.message_id === 'm9' })
  if (!('events' in resumed)) throw new Error('a resume was expected')
  const slices: number[][] = []
  const reads: number[] = []
  while (!resumed.events.done) {
    slices.push([...resumed.events.slice(3)].map((event) => event.seq))
    reads.push(asked)
  }
  t.same(slices, [[5], [], [9]], 'the kept events of seqs 3-5, 6-8 and 9-10')
  t.same(reads, [3, 6, 8], 'each slice read its own events and no more')
  t.notOk(resumed.events.overtaken)
})
