import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PagesAhead, PrefaultedBuffers, READY_BUFFER_MAX } from '../src/store/memory/prefaulted-buffers.js'

/** A file to read in place of /dev/zero whose bytes show where a buffer's contents came from. */
function markedFile (t: Test): string {
  const file = join(t.testdir(), 'marked')
  writeFileSync(file, Buffer.alloc(16 * 1024 * 1024, 0xab))
  return file
}

async function untilReady (buffers: PrefaultedBuffers): Promise<void> {
  await buffers.settled()
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
  await untilReady(buffers)
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
  await untilReady(buffers)
  t.equal(buffers.take(2000, 1000).length, 2000, 'larger than the ready one: allocated')
  await untilReady(buffers)
  t.equal(buffers.take(500, 500).length, 500, 'less than half the ready one: allocated')
  await untilReady(buffers)
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
  await untilReady(buffers)
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
