import t from 'tap'
import type { Message } from '../schemas/message.js'
import { jsonBytesOf } from '../src/data/json-bytes.js'
import type { IngestEvent } from '../src/store/event-writer.js'
import { slotOf } from '../src/store/influx/event-point.js'
import { FingerprintSet, KnownEvents } from '../src/store/influx/known-events.js'
import { otherWriterSince, writerStampLine } from '../src/store/influx/writer-stamps.js'

t.test('a fingerprint set holds every fingerprint added, through its growth, and few others', async (t) => {
  const set = new FingerprintSet()
  const added: number[] = []
  let seed = 7
  for (let i = 0; i < 100_000; i++) {
    // A fixed sequence (an LCG), never 0 or 1: the test says the same every run.
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    const fingerprint = Math.max(seed, 2)
    added.push(fingerprint)
    set.add(fingerprint)
  }
  t.ok(added.every((fingerprint) => set.has(fingerprint)), 'no fingerprint lost as the table grew')
  t.ok(set.size > 99_000 && set.size <= 100_000, `${set.size} distinct`)
  t.ok(set.bytes <= 100_000 * 4 * 4, `${set.bytes} bytes: at most half full, at least a quarter`)
  t.ok(set.has(0) === false, '0 (the empty mark) is not held until added')
  set.add(0)
  t.ok(set.has(0), '0 is a fingerprint like another')
})

const eventOf = (id: string, epochMs: number): IngestEvent => {
  const message: Message = { message_id: id, message_code: 'EMPTY', message_category: 'alert', date_time: new Date(epochMs).toISOString(), device_id: 'd', space_id: 's' }
  return { event: { message, epochMs }, line: 1, json: jsonBytesOf(JSON.stringify(message)) }
}

t.test('known events: an event may be held once its ID, or its millisecond and primary slot, was added; others almost never', async (t) => {
  const known = new KnownEvents()
  const T = Date.UTC(2026, 0, 1)
  for (let i = 0; i < 50_000; i++) known.add(`id-${i}`, T + i, slotOf(`id-${i}`))
  t.equal(known.size, 50_000)
  let missed = 0
  for (let i = 0; i < 50_000; i++) if (!known.mayHold(eventOf(`id-${i}`, T + 7 * i))) missed++
  t.equal(missed, 0, 'every added ID, at any time')
  const rival = (() => { for (let n = 0; ; n++) if (slotOf(`rival-${n}`) === slotOf('id-42')) return `rival-${n}` })()
  t.ok(known.mayHold(eventOf(rival, T + 42)), 'another ID at the millisecond and primary slot of an added event')
  let maybe = 0
  for (let i = 0; i < 50_000; i++) if (known.mayHold(eventOf(`new-${i}`, T - 1 - i))) maybe++
  t.ok(maybe < 20, `${maybe} of 50,000 new events would be looked up`)
  const before = known.size
  known.addIngested(eventOf('new-0', T - 1))
  t.equal(known.size, before + 1)
  t.ok(known.mayHold(eventOf('new-0', 0)))
})

t.test('writer stamps: one point per writer and hour, and a change of another writer is noticed', async (t) => {
  t.equal(writerStampLine('events', 'w-1', 3, Date.UTC(2026, 0, 1, 5, 30)), `events_writers,writer=w-1 n=3i ${BigInt(Date.UTC(2026, 0, 1, 5)) * 1_000_000n}`)
  const before = new Map([['me', 't1 1'], ['old', 't0 5']])
  t.equal(otherWriterSince(before, new Map([['me', 't1 9'], ['old', 't0 5']]), 'me'), undefined, 'only this writer wrote')
  t.equal(otherWriterSince(before, new Map([['me', 't1 1']]), 'me'), undefined, 'a writer out of the window is no news')
  t.equal(otherWriterSince(before, new Map([['old', 't0 6']]), 'me'), 'old', 'a known writer wrote again')
  t.equal(otherWriterSince(before, new Map([['new', 't2 1']]), 'me'), 'new', 'a new writer')
})
