import t, { type Test } from 'tap'
import { pbkdf2 } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { PagesAhead, PagesInTurn, PrefaultedBuffers, READY_BUFFER_MAX } from '../src/store/memory/prefaulted-buffers.js'
import { SegmentBuilder } from '../src/store/memory/segment-builder.js'
import { scanWireParts } from '../src/data/wire-line.js'

/** A file to read in place of /dev/zero whose bytes show where a buffer's contents came from. */
function markedFile (t: Test): string {
  const file = join(t.testdir(), 'marked')
  writeFileSync(file, Buffer.alloc(16 * 1024 * 1024, 0xab))
  return file
}

const allMarked = (buffer: Buffer, bytes: number) => buffer.subarray(0, bytes).every((byte) => byte === 0xab)

t.test('the next buffer is read into on the thread pool and handed out only once its read has ended', async (t) => {
  const buffers = new PrefaultedBuffers(markedFile(t))
  const first = buffers.take(1000, 800)
  t.ok(first.length >= 1000, 'the first is allocated as asked')
  t.notOk(buffers.hasReady, 'the next one is still being read into')
  const second = buffers.take(1000, 800)
  t.equal(second.length, 1000, 'one asked for meanwhile is allocated, not the one being read into')
  second.fill(0)
  await buffers.settled()
  t.ok(buffers.hasReady, 'then it is ready')
  const third = buffers.take(1000, 800)
  t.equal(third.length, 1250, 'the ready one, a quarter larger than asked (the next estimate differs a little)')
  t.ok(allMarked(third, 800), 'its expected bytes were read into')
  t.not(third, second)
  t.notOk(buffers.hasReady, 'taken: the one after it is on its way')
})

t.test('a ready buffer smaller than asked, or more than twice as large, is not used; asking again makes one of the new size', async (t) => {
  const buffers = new PrefaultedBuffers(markedFile(t))
  buffers.take(1000, 1000)
  await buffers.settled()
  t.equal(buffers.take(2000, 1000).length, 2000, 'larger than the ready one: allocated')
  await buffers.settled()
  t.equal(buffers.take(500, 500).length, 500, 'less than half the ready one: allocated')
  await buffers.settled()
  const ready = buffers.take(500, 500)
  t.equal(ready.length, 625)
  t.ok(allMarked(ready, 500))
})

t.test('no buffer is kept ready for rooms larger than READY_BUFFER_MAX', async (t) => {
  const buffers = new PrefaultedBuffers(markedFile(t))
  t.equal(buffers.take(READY_BUFFER_MAX + 1, READY_BUFFER_MAX + 1).length, READY_BUFFER_MAX + 1)
  await buffers.settled()
  t.notOk(buffers.hasReady, 'none made ready')
  buffers.take(READY_BUFFER_MAX / 2, READY_BUFFER_MAX / 2)
  await buffers.settled()
  t.ok(buffers.hasReady, 'one of half that size is')
})

t.test('without the zero file, buffers are allocated as asked and none is made ready', async (t) => {
  const buffers = new PrefaultedBuffers(join(t.testdir(), 'missing'))
  t.equal(buffers.take(1000, 1000).length, 1000)
  await buffers.settled()
  t.notOk(buffers.hasReady)
  t.equal(buffers.take(1000, 1000).length, 1000)
})

t.test('with /dev/zero, a ready buffer\'s expected bytes are zero', { skip: process.platform !== 'linux' && 'Linux /dev/zero' }, async (t) => {
  const buffers = new PrefaultedBuffers()
  buffers.take(1 << 20, 1 << 20)
  await buffers.settled()
  const ready = buffers.take(1 << 20, 1 << 20)
  t.equal(ready.length, 1.25 * (1 << 20))
  t.ok(ready.subarray(0, 1 << 20).every((byte) => byte === 0))
})

t.test('a buffer filled from its start: the reads go ahead of what is claimed, and what was claimed and written is never read into', async (t) => {
  const buffer = Buffer.alloc(20 * 1024 * 1024 + 12345)
  const ahead = new PagesAhead(buffer, markedFile(t))
  const step = 700 * 1024
  let waited = 0
  for (let at = 0; at < buffer.length; at += step) {
    const end = Math.min(buffer.length, at + step)
    const ready = ahead.claim(end)
    if (ready !== undefined) {
      waited++
      await ready
    }
    buffer.fill(0x11, at, end)
  }
  await ahead.settled()
  t.ok(buffer.every((byte) => byte === 0x11), 'every byte as the filler wrote it')
  t.ok(waited > 0, `the filler waited for reads under way where it was to write (${waited} times)`)
})

t.test('the pages ahead of a claim are read into, and none before it', async (t) => {
  const buffer = Buffer.alloc(12 * 1024 * 1024, 0x22)
  const ahead = new PagesAhead(buffer, markedFile(t))
  t.equal(ahead.claim(1000), undefined, 'nothing under way: no wait')
  await ahead.settled()
  t.ok(buffer.subarray(0, 1000).every((byte) => byte === 0x22), 'the claimed bytes untouched')
  t.ok(buffer.subarray(1000, 1000 + 8 * 1024 * 1024).every((byte) => byte === 0xab), 'the next two chunks read into')
  t.ok(buffer.subarray(1000 + 8 * 1024 * 1024).every((byte) => byte === 0x22), 'no further ahead than that')
  const none = new PagesAhead(Buffer.alloc(1024), join(t.testdir(), 'missing'))
  t.equal(none.claim(10), undefined, 'without the zero file: nothing to wait for')
})

t.test('the load\'s builder: lines past what it claimed go to other memory, so the reads under way after the claim change none of them', { skip: process.platform !== 'linux' && 'Linux /dev/zero' }, async (t) => {
  const line = (i: number) => Buffer.from(`{"message_id":"m${String(i).padStart(7, '0')}","message_code":"A","message_category":"alert","date_time":"${new Date(Date.UTC(2026, 0, 1) + i).toISOString()}","device_id":"d1","space_id":"s1"}`)
  const count = 100_000
  const lineBytes = line(0).length
  const builder = new SegmentBuilder(count * lineBytes)
  // The pool's 4 threads kept busy, so that the reads of /dev/zero the claim starts come after
  // the lines are written: the claim is for a few lines only, and every line is then added at
  // once, past it.
  const busy = Array.from({ length: 4 }, () => promisify(pbkdf2)('x', 'y', 400_000, 32, 'sha256'))
  t.equal(builder.beforeLines(10 * lineBytes), undefined, 'nothing under way yet')
  let problems = 0
  for (let i = 0; i < count; i++) {
    const bytes = line(i)
    if (builder.addWire(bytes, 0, bytes.length, scanWireParts(bytes, 0, bytes.length)!, i + 1) !== undefined) problems++
  }
  t.equal(problems, 0)
  const segment = builder.build()
  await Promise.all(busy)
  await sleep(100)
  const batches = [...segment.batches({ startMs: Date.UTC(2026, 0, 1), endMs: Date.UTC(2026, 0, 2) } as never)]
  const json = batches.flatMap((batch) => batch.messages.map((_message, i) => batch.encoded!.bytes.toString('utf8', batch.encoded!.offsets[batch.encoded!.positions[i]!], batch.encoded!.offsets[batch.encoded!.positions[i]! + 1])))
  t.equal(json.length, count)
  t.ok(json.every((text, i) => text === line(i).toString()), 'every event\'s bytes as its line')
})

/** A read that ends when the test says so: each call is kept, its memory to be written by the test. */
function heldReads () {
  const calls: Array<{ memory: Uint8Array, end: () => void }> = []
  const read = async (_fd: number, memory: Uint8Array) => new Promise<void>((resolve) => { calls.push({ memory, end: resolve }) })
  return { calls, read }
}

t.test('memory asked in turn is read into one read at a time, in the order asked; memory dropped before its turn is never allocated or read into', async (t) => {
  const { calls, read } = heldReads()
  const pages = new PagesInTurn(markedFile(t), read)
  const first = pages.ask(1024)
  const dropped = pages.ask(2048)
  const third = pages.ask(4096)
  dropped.drop()
  t.equal(calls.length, 1, 'one read under way')
  t.equal(calls[0]!.memory.length, 1024, 'the first asked')
  t.notOk(first.ready, 'not ready while its read is under way')
  calls[0]!.end()
  await sleep(1)
  t.ok(first.ready, 'ready once its read has ended')
  t.equal(calls.length, 2, 'then the next read starts')
  t.equal(calls[1]!.memory.length, 4096, 'the one dropped before its turn was skipped')
  calls[1]!.end()
  await pages.settled()
  const memory = first.take()
  t.equal(memory?.byteLength, 1024)
  t.ok(new Uint8Array(memory!).every((byte) => byte === 0), 'zeroed memory')
  t.equal(first.take(), undefined, 'taken once')
  t.ok(third.ready)
  t.equal(dropped.take(), undefined)
})

t.test('memory taken before its read has ended is not handed out, then or later: its asker writes elsewhere while the pool writes to it', async (t) => {
  const { calls, read } = heldReads()
  const pages = new PagesInTurn(markedFile(t), read)
  const asked = pages.ask(1024)
  t.equal(asked.take(), undefined, 'its read under way: none')
  calls[0]!.memory.fill(0xab)
  calls[0]!.end()
  await pages.settled()
  t.notOk(asked.ready)
  t.equal(asked.take(), undefined, 'nor once it has ended')
})

t.test('memory asked in turn is read into from the zero file; without one, none is ever ready', async (t) => {
  const pages = new PagesInTurn(markedFile(t))
  const asked = pages.ask(1 << 20)
  await pages.settled()
  t.ok(asked.ready)
  t.ok(new Uint8Array(asked.take()!).every((byte) => byte === 0xab), 'read into (the test\'s file of marked bytes)')
  const none = new PagesInTurn(join(t.testdir(), 'missing'))
  const never = none.ask(1024)
  await none.settled()
  t.notOk(never.ready)
  t.equal(never.take(), undefined)
})

t.test('memory that cannot be allocated when its turn comes is none, and the asks after it are served', async (t) => {
  const pages = new PagesInTurn(markedFile(t))
  const huge = pages.ask(2 ** 53)
  await pages.settled()
  t.notOk(huge.ready, 'none for it')
  const next = pages.ask(1024)
  await pages.settled()
  t.ok(next.ready, 'the next ask is read into')
})
