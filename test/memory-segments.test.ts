import t from 'tap'
import { join } from 'node:path'
import { readFileSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Message } from '../schemas/message.js'
import type { StoredEvent } from '../src/data/event-lines.js'
import { jsonBytesOf } from '../src/data/json-bytes.js'
import type { EventBatch, EventQuery } from '../src/store/event-store.js'
import { MemoryEventStore } from '../src/store/memory/memory-event-store.js'
import { EventsFileAppender } from '../src/store/memory/events-file-appender.js'
import { MemorySegment } from '../src/store/memory/memory-segment.js'
import { encodeMessage } from '../src/store/message-json.js'

const T0 = Date.UTC(2025, 0, 1)
const stored = (id: string, ms: number, device = 'd1'): StoredEvent => ({
  epochMs: T0 + ms,
  message: { message_id: id, message_code: 'C', message_category: 'alert', date_time: new Date(T0 + ms).toISOString(), device_id: device, space_id: 's1' }
})

const ingest = (event: StoredEvent, line: number) => ({ event, line, json: jsonBytesOf(encodeMessage(event.message)) })

async function answer (store: MemoryEventStore, query = { startMs: T0, endMs: T0 + 10_000_000, entities: undefined }): Promise<{ ids: string[], json: string[], batches: EventBatch[] }> {
  const batches: EventBatch[] = []
  for await (const batch of store.queryEvents(query)) batches.push(batch)
  const messages = batches.flatMap((batch) => batch.messages as Message[])
  const json = batches.flatMap((batch) => batch.messages.map((message, i) => batch.encoded === undefined
    ? encodeMessage(message)
    : batch.encoded.bytes.toString('utf8', batch.encoded.offsets[batch.encoded.positions[i]!], batch.encoded.offsets[batch.encoded.positions[i]! + 1])))
  return { ids: messages.map((message) => message.message_id), json, batches }
}

t.test('ingested events are served merged with the loaded ones, in order, with their own JSON', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0), stored('c', 2000), stored('e', 4000)], file)
  const outcome = await store.writeEvents([stored('b', 1000), stored('d', 3000), stored('f', 5000), stored('c2', 2000)].map((event, i) => ingest(event, i + 1)))
  t.equal(outcome.written, 4)
  t.same(outcome.stored.map(({ event }) => event.message.message_id), ['b', 'd', 'f', 'c2'])
  const { ids, json } = await answer(store)
  t.same(ids, ['a', 'b', 'c', 'c2', 'd', 'e', 'f'])
  t.same(json, ids.map((id) => json.find((text) => text.includes(`"${id}"`))), 'each event its own bytes')
  t.same(json.map((text) => JSON.parse(text).message_id), ids)
})

t.test('many small ingests merge into few segments, and answers stay whole and ordered', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('base', 0)], file)
  for (let i = 0; i < 200; i++) await store.writeEvents([ingest(stored(`n${String(i).padStart(3, '0')}`, 1000 + i), 1)])
  t.ok(store.segmentCount <= 10, `${store.segmentCount} segments for 201 ingests`)
  const { ids } = await answer(store)
  t.equal(ids.length, 201)
  t.same(ids, [...ids].sort((a, b) => a === 'base' ? -1 : b === 'base' ? 1 : a < b ? -1 : 1))
  const device = await answer(store, { startMs: T0 + 1050, endMs: T0 + 1060, entities: { deviceIds: new Set(['d1']), spaceIds: new Set() } } as never)
  t.same(device.ids, Array.from({ length: 10 }, (_, i) => `n0${50 + i}`), 'the indexes of every segment')
})

t.test('events another worker wrote are taken in once', async (t) => {
  const store = new MemoryEventStore([stored('a', 0)])
  store.takeWrittenElsewhere([stored('b', 1000), stored('a', 0)])
  store.takeWrittenElsewhere([stored('b', 1000)])
  t.same((await answer(store)).ids, ['a', 'b'])
})

t.test('writes made together (one group commit): each judged after the ones before it, each with its own outcome, all in the file', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  const first = store.writeEvents([ingest(stored('b', 1000), 1), ingest(stored('c', 2000), 2)])
  const second = store.writeEvents([ingest(stored('b', 1000), 1), ingest(stored('c', 2500), 2), ingest(stored('d', 3000), 3)])
  const [one, two] = await Promise.all([first, second])
  t.same([one.written, one.unchanged, one.refused], [2, 0, []])
  t.same([two.written, two.unchanged, two.refused.map(({ line }) => line)], [1, 1, [2]], 'the second call sees the first call\'s events')
  t.same(two.stored.map(({ event }) => event.message.message_id), ['d'])
  t.same(readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).message_id), ['b', 'c', 'd'])
  const { ids } = await answer(store)
  t.same(ids, ['a', 'b', 'c', 'd'])
})

t.test('a group whose append fails fails every call of it, and none of its events is served', async (t) => {
  const dir = t.testdir()
  // A directory where the file should be: the append cannot open it.
  const store = new MemoryEventStore([stored('a', 0)], dir)
  const calls = [store.writeEvents([ingest(stored('b', 1000), 1)]), store.writeEvents([ingest(stored('c', 2000), 1)])]
  const settled = await Promise.allSettled(calls)
  t.same(settled.map(({ status }) => status), ['rejected', 'rejected'])
  t.same((await answer(store)).ids, ['a'])
})

t.test('writes made in the same turn share one write to disk', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  // Count the writes of every file handle (the store's appender opens its own, O_DSYNC: each
  // write is on disk when it returns, as a write and an fdatasync would be).
  const probe = await open(file, 'r')
  const prototype = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown>, datasync: () => Promise<void> }
  await probe.close()
  const { write, datasync } = prototype
  let writes = 0
  let flushes = 0
  prototype.write = function (this: unknown, ...args: unknown[]) { writes++; return write.apply(this, args) }
  prototype.datasync = function (this: unknown) { flushes++; return datasync.call(this) }
  t.teardown(() => { Object.assign(prototype, { write, datasync }) })
  await Promise.all([1, 2, 3].map((n) => store.writeEvents([ingest(stored(`g${n}`, 1000 * n), 1)])))
  t.equal(writes, 1, 'three calls, one write')
  await store.writeEvents([ingest(stored('later', 9000), 1)])
  t.equal(writes, 2, 'a write after them, a write of its own')
  t.equal(flushes, 0, 'no separate flush: the file is opened O_DSYNC')
  t.same(readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).message_id), ['g1', 'g2', 'g3', 'later'])
  await store.close()
})

t.test('a group that fails on a defect rejects its calls, writes nothing, and the writes after it still go through', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  // Either way of building the group's segment (its own, or appended into the last one's room).
  const { fromEncoded, appendEncoded } = MemorySegment
  MemorySegment.fromEncoded = MemorySegment.appendEncoded = () => { throw new Error('a defect while building the segment') }
  const failed = await Promise.allSettled([store.writeEvents([ingest(stored('b', 1000), 1)])])
  Object.assign(MemorySegment, { fromEncoded, appendEncoded })
  t.equal(failed[0]!.status, 'rejected')
  const later = await Promise.race([store.writeEvents([ingest(stored('c', 2000), 1)]), new Promise((resolve) => setTimeout(() => resolve('stuck'), 2000))])
  t.not(later, 'stuck', 'the store still takes writes')
  t.same((await answer(store)).ids, ['a', 'c'])
  t.same(readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).message_id), ['c'], 'nothing of the failed group in the file')
  await store.close()
})

t.test('segments appended one after another share their storage, and each reads only its own events', async (t) => {
  const segmentOf = (from: number, to: number) => MemorySegment.fromEncoded(Array.from({ length: to - from }, (_, i) => ingest(stored(`m${String(from + i).padStart(4, '0')}`, (from + i) * 10), 1)))
  const read = (segment: MemorySegment) => [...segment.batches({ startMs: T0, endMs: T0 + 1e9 } as never)].flatMap((batch) =>
    batch.messages.map((message, i) => {
      const json = batch.encoded!.bytes.toString('utf8', batch.encoded!.offsets[batch.encoded!.positions[i]!], batch.encoded!.offsets[batch.encoded!.positions[i]! + 1])
      t.equal(json, encodeMessage(message), `${message.message_id}: its own bytes`)
      return message.message_id
    }))
  const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `m${String(from + i).padStart(4, '0')}`)
  const first = segmentOf(0, 10)
  const second = MemorySegment.append(first, segmentOf(10, 600))!
  const third = MemorySegment.append(second, segmentOf(600, 3000))!
  t.same(read(first), ids(0, 10), 'the first as it was')
  t.same(read(second), ids(0, 600))
  t.same(read(third), ids(0, 3000))
  t.equal(third.lastMs, T0 + 29_990)
  t.equal(third.messageWithId('m0005')?.message_id, 'm0005', 'its message_id index')
  // The second is no longer the newest on its storage: appending to it again must not write over the third's events.
  const branch = MemorySegment.append(second, segmentOf(5000, 5010))!
  t.same(read(branch), [...ids(0, 600), ...ids(5000, 5010)])
  t.same(read(third), ids(0, 3000), 'the third untouched')
  t.equal(MemorySegment.append(third, segmentOf(100, 110)), undefined, 'events that do not all come after it are not appended')
})

t.test('a store taking ingests in time order keeps few segments, and one out of order is merged in its place', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('base', 0)], file)
  for (let i = 0; i < 300; i++) await store.writeEvents(Array.from({ length: 100 }, (_, k) => ingest(stored(`n${String(i * 100 + k).padStart(5, '0')}`, 1000 + i * 100 + k), k + 1)))
  t.ok(store.segmentCount <= 4, `${store.segmentCount} segments for 30,001 events`)
  await store.writeEvents([ingest(stored('late', 1500), 1)])
  const { ids } = await answer(store, { startMs: T0, endMs: T0 + 1e9, entities: undefined })
  t.equal(ids.length, 30_002)
  t.equal(ids.indexOf('late'), 501, 'in its place in time (after base and n00000-n00499)')
  t.same(readFileSync(file, 'utf8').split('\n').length - 1, 30_001, 'every event in the file')
})

t.test('events written into the last segment\'s room: not ASCII, after a failed append, and never seen by the segment before them', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  const accented = (id: string, ms: number): StoredEvent => ({ ...stored(id, ms), message: { ...stored(id, ms).message, space_id: 'salle-é-😀' } })
  await store.writeEvents([ingest(stored('b', 1000), 1), ingest(accented('c', 2000), 2)])
  const before = await answer(store)
  // The file cannot take the next group: its events were written into the room already.
  const append = EventsFileAppender.prototype.append
  EventsFileAppender.prototype.append = async () => { throw new Error('disk full') }
  const failed = await Promise.allSettled([store.writeEvents([ingest(stored('d', 3000), 1)])])
  EventsFileAppender.prototype.append = append
  t.equal(failed[0]!.status, 'rejected')
  t.same(await answer(store), before, 'the store serves what it served before')
  await store.writeEvents([ingest(accented('e', 4000), 1), ingest(stored('f', 5000), 2)])
  const after = await answer(store)
  t.same(after.ids, ['a', 'b', 'c', 'e', 'f'])
  const expected: Record<string, StoredEvent> = { a: stored('a', 0), b: stored('b', 1000), c: accented('c', 2000), e: accented('e', 4000), f: stored('f', 5000) }
  t.same(after.json, after.ids.map((id) => encodeMessage(expected[id]!.message)), 'each event its own bytes, the accented ones too')
  t.same(readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).message_id), ['b', 'c', 'e', 'f'], 'nothing of the failed group in the file')
  t.equal(store.segmentCount, 2, 'the loaded segment and one of ingests')
  await store.close()
})

t.test('events another worker wrote, taken in while a group is on its way to the disk: both served, once', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('L', 0)], file)
  await store.writeEvents([ingest(stored('a', 100), 1)])
  // The group is appended into the last segment's room, then waits for the file; meanwhile
  // another worker's events come in, after it in time and before it.
  const pending = store.writeEvents([ingest(stored('b', 200), 1)])
  await new Promise((resolve) => setImmediate(resolve))
  store.takeWrittenElsewhere([stored('w', 150)])
  store.takeWrittenElsewhere([stored('z', 300)])
  await pending
  t.same((await answer(store)).ids, ['L', 'a', 'w', 'b', 'z'])
  const again = await store.writeEvents([ingest(stored('w', 150), 1), ingest(stored('b', 200), 2)])
  t.same([again.written, again.unchanged], [0, 2], 'both known, as stored')
  await store.close()
})

t.test('the events file is appended to with O_DSYNC: each write is on disk when it returns', { skip: process.platform !== 'linux' && 'reads /proc/self/fdinfo' }, async (t) => {
  const { readdirSync, readlinkSync, constants } = await import('node:fs')
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '{"partial":1}')
  const appender = new EventsFileAppender(file)
  await appender.append(Buffer.from('line-1\n'))
  await appender.append('line-2\n')
  const fd = readdirSync('/proc/self/fd').find((entry) => { try { return readlinkSync(`/proc/self/fd/${entry}`) === file } catch { return false } })
  t.ok(fd !== undefined, 'the appender keeps its file open')
  const flags = Number.parseInt(/^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!, 8)
  t.equal(flags & constants.O_DSYNC, constants.O_DSYNC, 'O_DSYNC')
  t.equal(flags & constants.O_APPEND, constants.O_APPEND, 'O_APPEND')
  await appender.close()
  t.equal(readFileSync(file, 'utf8'), '{"partial":1}\nline-1\nline-2\n', 'a file ending mid-line gets a line break first')
})

t.test('the IDs of a group that failed are not kept: the same events are written when posted again, and other IDs are still found', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  // Many IDs before and after: the failed group's entries sit among them in the index's runs.
  await store.writeEvents(Array.from({ length: 3000 }, (_, i) => ingest(stored(`before-${i}`, 1000 + i), i + 1)))
  const indexed = store.indexedIds
  const append = EventsFileAppender.prototype.append
  EventsFileAppender.prototype.append = async () => { throw new Error('disk full') }
  const failed = await Promise.allSettled([store.writeEvents(Array.from({ length: 3000 }, (_, i) => ingest(stored(`lost-${i}`, 5000 + i), i + 1)))])
  EventsFileAppender.prototype.append = append
  t.equal(failed[0]!.status, 'rejected')
  // A stale entry would only cost room (its event is never found by time), so what shows it is the index's size.
  t.equal(store.indexedIds, indexed, 'the failed group\'s IDs are taken out of the index')
  const again = await store.writeEvents(Array.from({ length: 3000 }, (_, i) => ingest(stored(`lost-${i}`, 5000 + i), i + 1)))
  t.same({ written: again.written, unchanged: again.unchanged, refused: again.refused.length }, { written: 3000, unchanged: 0, refused: 0 }, 'written, not "already stored"')
  const repeat = await store.writeEvents([...Array.from({ length: 3000 }, (_, i) => ingest(stored(`before-${i}`, 1000 + i), i + 1)), ingest(stored('lost-7', 9999), 3001)])
  t.same({ written: repeat.written, unchanged: repeat.unchanged, refused: repeat.refused }, { written: 0, unchanged: 3000, refused: [{ line: 3001, reason: 'message_id "lost-7" is already stored for a different event' }] })
  t.equal((await answer(store)).ids.length, 6001)
  await store.close()
})

t.test('events of one millisecond, many of them: posted again, each is found by a search, not a walk through the others', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  // A producer whose clock counts seconds: 8,000 events at one millisecond, in two segments. The
  // stored ones count how often their message_id is read.
  let reads = 0
  const counted = (i: number) => {
    const event = stored(`same-${String(i).padStart(5, '0')}`, 5000)
    const id = event.message.message_id
    Object.defineProperty(event.message, 'message_id', { enumerable: true, get () { reads++; return id } })
    return ingest(event, i + 1)
  }
  await store.writeEvents(Array.from({ length: 4000 }, (_, i) => counted(i)))
  await store.writeEvents(Array.from({ length: 4000 }, (_, i) => counted(4000 + i)))
  reads = 0
  const again = await store.writeEvents(Array.from({ length: 8000 }, (_, i) => ingest(stored(`same-${String(i).padStart(5, '0')}`, 5000), i + 1)))
  t.same({ written: again.written, unchanged: again.unchanged, refused: again.refused.length }, { written: 0, unchanged: 8000, refused: 0 })
  // A walk through the millisecond's events reads about n²/4 of their IDs (16 million); a search about n log n.
  t.ok(reads < 8000 * 40, `${reads} stored IDs read to find 8,000 events among 8,000 of one millisecond`)
  await store.close()
})

t.test('a message_ids query after ingests: loaded and ingested IDs found, the added entries of the loaded segment\'s index never taken for its own', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const loaded = Array.from({ length: 2000 }, (_, i) => stored(`loaded-${i}`, i * 10))
  const store = new MemoryEventStore(loaded, file)
  await store.writeEvents(Array.from({ length: 3000 }, (_, i) => ingest(stored(`added-${i}`, 100_000 + i), i + 1)))
  const ids = ['loaded-7', 'added-7', 'loaded-1999', 'added-2999', 'missing-1']
  const { ids: found } = await answer(store, { startMs: T0, endMs: T0 + 1e9, entities: undefined, messageIds: new Set(ids) } as never)
  t.same(found, ['loaded-7', 'loaded-1999', 'added-7', 'added-2999'])
  await store.close()
})

t.test('an append cut short (its cut-back failed, or its writer died) is cut off by the next append, whichever process makes it; a whole or hand-edited last line is kept and ended', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, 'before\n')
  const probe = await open(file, 'r')
  const handleClass = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<{ bytesWritten: number }>, truncate: (...args: unknown[]) => Promise<void> }
  await probe.close()
  const { write, truncate } = handleClass
  t.teardown(() => { handleClass.write = write; handleClass.truncate = truncate })
  // The next write puts half its bytes in the file, then fails (a full disk); the cut-back fails too.
  const failOnce = () => {
    handleClass.write = async function (this: unknown, bytes: unknown, offset: unknown, length: unknown) {
      handleClass.write = write
      await write.call(this, bytes, offset, Math.floor((length as number) / 2))
      throw new Error('ENOSPC: no space left on device')
    }
    handleClass.truncate = async function () {
      handleClass.truncate = truncate
      throw new Error('EIO: i/o error')
    }
  }
  const appender = new EventsFileAppender(file)
  failOnce()
  await t.rejects(appender.append('{"m":"lost-line"}\n'), { message: /ENOSPC/ })
  t.equal(readFileSync(file, 'utf8'), 'before\n{"m":"los', 'half of it stays')
  await appender.append('{"m":"next"}\n')
  t.equal(readFileSync(file, 'utf8'), 'before\n{"m":"next"}\n', 'cut off before the next append')

  failOnce()
  await t.rejects(appender.append('{"m":"lost-line"}\n'), { message: /ENOSPC/ })
  const otherWorker = new EventsFileAppender(file)
  await otherWorker.append('{"m":"other"}\n')
  await otherWorker.close()
  t.equal(readFileSync(file, 'utf8'), 'before\n{"m":"next"}\n{"m":"other"}\n', 'by another process\'s append too: no event shares a line with a half one')

  writeFileSync(file, readFileSync(file, 'utf8') + '{"m":"by hand"}')
  await appender.append('{"m":"after-whole"}\n')
  writeFileSync(file, readFileSync(file, 'utf8') + '{"m": oops "typo"}')
  await appender.append('{"m":"after-typo"}\n')
  await appender.close()
  t.equal(readFileSync(file, 'utf8'), 'before\n{"m":"next"}\n{"m":"other"}\n{"m":"by hand"}\n{"m":"after-whole"}\n{"m": oops "typo"}\n{"m":"after-typo"}\n', 'a whole line and a hand-edited one are kept, each ended')
})

t.test('events at the file\'s end that no process announced (a worker died between its append and its announcement) are taken once, back to the first event the store has', async (t) => {
  const { appendFileSync } = await import('node:fs')
  const file = join(t.testdir(), 'events.ndjson')
  const line = (event: StoredEvent) => encodeMessage(event.message) + '\n'
  // x: a line further back that the store does not have (it stands for any line before the last
  // one the store has): never reached.
  writeFileSync(file, line(stored('a', 0)) + line(stored('x', 500)) + line(stored('b', 1000)))
  const store = new MemoryEventStore([stored('a', 0), stored('b', 1000)], file)
  await store.writeEvents([ingest(stored('c', 2000), 1)])
  t.same(await store.takeUnannounced(), [], 'nothing unannounced')
  appendFileSync(file, line(stored('d', 3000)) + 'not an event\n' + line(stored('e', 2500)) + '{"message_id":"cut sh')
  const taken = await store.takeUnannounced()
  t.same(taken.map(({ message }) => message.message_id), ['d', 'e'], 'in file order; a bad line and a line cut short passed over')
  t.same((await answer(store)).ids, ['a', 'b', 'c', 'e', 'd'])
  t.same(await store.takeUnannounced(), [], 'taken once')
  const again = await store.writeEvents([ingest(stored('d', 3000), 1), ingest(stored('e', 9999), 2)])
  t.same([again.written, again.unchanged, again.refused.map(({ line }) => line)], [0, 1, [2]], 'judged against them')
  await store.close()
})

t.test('a large group is judged in slices, other work running between them; a failure after a slice another worker\'s events came between takes out only the group\'s IDs', async (t) => {
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  const indexed = store.indexedIds
  const size = 20_000
  // What the index holds at each turn while the group is judged: one turn held all of it, and a
  // 70,000-line ingest held the event loop 80 ms (230 ms when every line was unchanged).
  const seen = new Set<number>()
  let done = false
  const sample = (): void => { seen.add(store.indexedIds); if (!done) setImmediate(sample) }
  setImmediate(sample)
  const written = await store.writeEvents(Array.from({ length: size }, (_, i) => ingest(stored(`n-${i}`, 1000 + i), i + 1)))
  done = true
  t.equal(written.written, size)
  t.ok([...seen].some((count) => count > indexed && count < indexed + size), `a turn between its first and last slice (the index's sizes seen: ${[...seen].sort((a, b) => a - b).join(', ')})`)

  // Another worker's events taken in between two slices of a group that then fails: only the
  // group's own IDs go, whatever numbers the other events took among them.
  const before = store.indexedIds
  const append = EventsFileAppender.prototype.append
  EventsFileAppender.prototype.append = async () => { throw new Error('disk full') }
  t.teardown(() => { EventsFileAppender.prototype.append = append })
  const failing = store.writeEvents(Array.from({ length: size }, (_, i) => ingest(stored(`lost-${i}`, 50_000 + i), i + 1)))
  let elsewhere = 0
  const takeBetween = (): void => {
    if (store.indexedIds > before + elsewhere && elsewhere === 0) store.takeWrittenElsewhere([stored(`w-${elsewhere++}`, 40_000)])
    else if (elsewhere === 0) setImmediate(takeBetween)
  }
  setImmediate(takeBetween)
  const failed = await Promise.allSettled([failing])
  EventsFileAppender.prototype.append = append
  t.equal(failed[0]!.status, 'rejected')
  t.equal(elsewhere, 1, 'the other worker\'s event came while the group was judged')
  t.equal(store.indexedIds, before + 1, 'the group\'s IDs taken out, the other worker\'s kept')
  const again = await store.writeEvents([ingest(stored('w-0', 40_000), 1), ...Array.from({ length: size }, (_, i) => ingest(stored(`lost-${i}`, 50_000 + i), i + 2))])
  t.same({ written: again.written, unchanged: again.unchanged, refused: again.refused.length }, { written: size, unchanged: 1, refused: 0 })
  t.equal((await answer(store)).ids.length, 1 + 2 * size + 1)
  await store.close()
})

t.test('one group commit takes at most GROUP_EVENTS_MAX events of whole calls: the calls after them go in the next', async (t) => {
  const { GROUP_EVENTS_MAX } = await import('../src/store/memory/memory-event-store.js')
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const store = new MemoryEventStore([stored('a', 0)], file)
  const appended: number[] = []
  const append = EventsFileAppender.prototype.append
  EventsFileAppender.prototype.append = function (this: EventsFileAppender, bytes: Buffer | string) {
    appended.push(String(bytes).split('\n').length - 1)
    return append.call(this, bytes)
  }
  t.teardown(() => { EventsFileAppender.prototype.append = append })
  const part = Math.ceil(GROUP_EVENTS_MAX * 0.6)
  const calls = [0, 1, 2].map((k) => store.writeEvents(Array.from({ length: part }, (_, i) => ingest(stored(`p${k}-${i}`, 1000 + k * part + i), i + 1))))
  const outcomes = await Promise.all(calls)
  t.same(outcomes.map(({ written }) => written), [part, part, part])
  t.same(appended, [part, part, part], 'a group of one call each: two would pass the bound')
  const small = await Promise.all([0, 1, 2].map((k) => store.writeEvents([ingest(stored(`s${k}`, 900_000 + k), 1)])))
  t.same(small.map(({ written }) => written), [1, 1, 1])
  t.same(appended.slice(3), [3], 'small calls made together still go as one group')
  await store.close()
})

t.test('an event posted again is found unchanged from its bytes: the stored event\'s message is not made for it', async (t) => {
  const { SegmentBuilder } = await import('../src/store/memory/segment-builder.js')
  const { scanWireParts } = await import('../src/data/wire-line.js')
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, '')
  const events = Array.from({ length: 50 }, (_, i) => stored(`k-${String(i).padStart(2, '0')}`, 1000 + i))
  const builder = new SegmentBuilder(1 << 16)
  events.forEach(({ message }, i) => {
    const bytes = Buffer.from(encodeMessage(message))
    t.equal(builder.addWire(bytes, 0, bytes.length, scanWireParts(bytes, 0, bytes.length)!, i + 1), undefined)
  })
  const loaded = builder.build()
  const store = new MemoryEventStore(loaded, file)
  const again = await store.writeEvents(events.map((event, i) => ingest(event, i + 1)))
  t.same({ written: again.written, unchanged: again.unchanged, refused: again.refused }, { written: 0, unchanged: 50, refused: [] })
  t.equal(loaded.messagesMade, 0, 'no stored message made to compare with')
  // Not the same bytes: judged by its fields, as before.
  const changed = stored('k-07', 1007, 'd2')
  const other = await store.writeEvents([ingest(changed, 1)])
  t.same(other.refused, [{ line: 1, reason: 'message_id "k-07" is already stored for a different event' }])
  // Events ingested earlier, in the store's later segments: found unchanged as well.
  await store.writeEvents([ingest(stored('late', 5000), 1)])
  const late = await store.writeEvents([ingest(stored('late', 5000), 1)])
  t.same([late.written, late.unchanged], [0, 1])
  t.equal(readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').length, 1, 'only the new event written')
  await store.close()
})

t.test('the code and category indexes built in slices answer as those built at once; a query before the last slice finishes them', async (t) => {
  const events = Array.from({ length: 500 }, (_, i) => {
    const event = stored(`x-${String(i).padStart(3, '0')}`, 1000 + i, `d${i % 7}`)
    event.message.message_code = `CODE_${i % 5}`
    event.message.message_category = i % 3 === 0 ? 'notification' : 'alert'
    return event
  })
  const ids = (segment: MemorySegment, query: Partial<EventQuery>) => [...segment.batches({ startMs: T0, endMs: T0 + 10_000, entities: undefined, ...query })].flatMap((batch) => batch.messages.map((message) => message.message_id))
  const queries: Array<Partial<EventQuery>> = [{ messageCodes: new Set(['CODE_1']) }, { messageCodes: new Set(['CODE_0', 'CODE_3']) }, { category: 'notification' }, { category: 'alert', startMs: T0 + 1200 }]
  const atOnce = new MemorySegment(events)
  const expected = queries.map((query) => ids(atOnce, query))
  t.same(expected.map((answer) => answer.length), [100, 200, 167, 200], 'each query selects a part')
  const sliced = new MemorySegment(events)
  let slices = 1
  while (!sliced.buildExclusiveIndexes(64)) slices++
  t.equal(slices, 8, '500 events, 64 a slice')
  t.same(queries.map((query) => ids(sliced, query)), expected)
  const halfway = new MemorySegment(events)
  t.equal(halfway.buildExclusiveIndexes(200), false)
  t.same(queries.map((query) => ids(halfway, query)), expected, 'finished by the query')
  t.equal(halfway.buildExclusiveIndexes(0), true)
})

t.test('a store builds its loaded events\' code and category indexes in turns, and stops when closed', async (t) => {
  const { INDEXED_PER_TURN } = await import('../src/store/memory/memory-event-store.js')
  const events = Array.from({ length: 2 * INDEXED_PER_TURN + 10 }, (_, i) => stored(`y-${i}`, i))
  const loaded = new MemorySegment(events)
  const store = new MemoryEventStore(loaded)
  const built: boolean[] = []
  let done = false
  const sample = (): void => { if (!done) { built.push(loaded.buildExclusiveIndexes(0)); setImmediate(sample) } }
  const indexing = store.indexInTurns()
  setImmediate(sample)
  await indexing
  done = true
  t.equal(loaded.buildExclusiveIndexes(0), true, 'built')
  t.ok(built.length >= 2 && !built[0], `not in one turn (${built.join(' ')})`)
  const other = new MemorySegment(events)
  const closing = new MemoryEventStore(other)
  const stopped = closing.indexInTurns()
  await closing.close()
  await stopped
  t.equal(other.buildExclusiveIndexes(0), false, 'a closed store builds no more')
})

t.test('entities and a rare code: the code\'s events are read and checked for the entities, not every event of the entities', async (t) => {
  const { SegmentBuilder } = await import('../src/store/memory/segment-builder.js')
  const { scanWireParts, WireExclusiveFilter } = await import('../src/data/wire-line.js')
  const builder = new SegmentBuilder(1 << 20)
  const lines: StoredEvent[] = []
  for (let i = 0; i < 6000; i++) {
    const event = stored(`r-${String(i).padStart(4, '0')}`, 1000 + i, `d${i % 3}`)
    if (i % 1000 === 7) event.message.message_code = 'RARE'
    lines.push(event)
  }
  lines.forEach(({ message }, i) => {
    const bytes = Buffer.from(encodeMessage(message))
    t.equal(builder.addWire(bytes, 0, bytes.length, scanWireParts(bytes, 0, bytes.length)!, i + 1), undefined)
  })
  const segment = builder.build()
  const builder2Segment = () => {
    const small = new SegmentBuilder(1 << 16)
    for (let i = 0; i < 300; i++) {
      const event = stored(`f-${i}`, 1000 + i, `d${i % 3}`)
      if (i === 1) event.message.message_code = 'RARE'
      const bytes = Buffer.from(encodeMessage(event.message))
      small.addWire(bytes, 0, bytes.length, scanWireParts(bytes, 0, bytes.length)!, i + 1)
    }
    return small.build()
  }
  let reads = 0
  const mayMatch = WireExclusiveFilter.prototype.mayMatch
  WireExclusiveFilter.prototype.mayMatch = function (this: typeof WireExclusiveFilter.prototype, bytes: Buffer, start: number) { reads++; return mayMatch.call(this, bytes, start) }
  t.teardown(() => { WireExclusiveFilter.prototype.mayMatch = mayMatch })
  const ids = (query: Partial<EventQuery>) => [...segment.batches({ startMs: T0, endMs: T0 + 10_000, entities: undefined, ...query })].flatMap((batch) => batch.messages.map((message) => message.message_id))
  const d1 = { deviceIds: new Set(['d1']), spaceIds: new Set<string>() }
  t.same(ids({ entities: d1, messageCodes: new Set(['RARE']) }), ['r-0007', 'r-3007'], 'of d1 (i % 3 === 1) and RARE (7, 1007, 2007, ...): 7 and 3007')
  t.ok(reads <= 6, `${reads} events read for the code (its 6 events), not d1's 2,000`)
  reads = 0
  t.same(ids({ entities: d1, messageCodes: new Set(['NONE']) }), [], 'a code no event has')
  t.equal(reads, 0, 'nothing read')
  reads = 0
  // A common code: the entity's events are the fewer, read as before.
  t.equal(ids({ entities: d1, messageCodes: new Set(['C']) }).length, 1998)
  t.equal(ids({ entities: d1, category: 'alert', messageCodes: undefined }).length, 2000)
  // An entity of few events in the window: they are read, no code index is built for them.
  const few = builder2Segment()
  t.same([...few.batches({ startMs: T0, endMs: T0 + 10_000, entities: { deviceIds: new Set(['d1']), spaceIds: new Set() }, messageCodes: new Set(['RARE']) })].flatMap((batch) => batch.messages.map((message) => message.message_id)), ['f-1'])
  t.equal(few.buildExclusiveIndexes(0), false, 'no code index built for 100 events')
})

t.test('codes or a category over a narrow window of a large segment whose code index is not built yet: the window is read, the index not finished in one piece for it', async (t) => {
  const { SegmentBuilder } = await import('../src/store/memory/segment-builder.js')
  const { scanWireParts } = await import('../src/data/wire-line.js')
  const builder = new SegmentBuilder(1 << 24)
  for (let i = 0; i < 70_000; i++) {
    const event = stored(`w-${i}`, i * 10, `d${i % 3}`)
    if (i % 100 === 0) event.message.message_code = 'EVERY_100'
    const bytes = Buffer.from(encodeMessage(event.message))
    builder.addWire(bytes, 0, bytes.length, scanWireParts(bytes, 0, bytes.length)!, i + 1)
  }
  const segment = builder.build()
  const ids = (query: Partial<EventQuery>) => [...segment.batches({ startMs: T0, endMs: T0 + 700_000, entities: undefined, ...query })].flatMap((batch) => batch.messages.map((message) => message.message_id))
  // A window of 10,000 events (100 s).
  t.same(ids({ startMs: T0 + 100_000, endMs: T0 + 200_000, messageCodes: new Set(['EVERY_100']) }), Array.from({ length: 100 }, (_, i) => `w-${10_000 + i * 100}`))
  t.equal(ids({ startMs: T0 + 100_000, endMs: T0 + 200_000, category: 'alert' }).length, 10_000)
  t.equal(segment.buildExclusiveIndexes(0), false, 'the index not built for them')
  // The whole segment: the index, finished for it.
  t.equal(ids({ messageCodes: new Set(['EVERY_100']) }).length, 700)
  t.equal(segment.buildExclusiveIndexes(0), true, 'built')
})
