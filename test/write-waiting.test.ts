import t from 'tap'
import { Writable } from 'node:stream'
import { writeWaiting } from '../src/live/write-waiting.js'

/** A socket's stand-in (a Writable whose writes complete after `delayMs`), to hold its buffer's state at will. */
function slowWritable (highWaterMark: number, delayMs: number): Writable {
  return new Writable({ highWaterMark, write (_chunk, _encoding, callback) { setTimeout(callback, delayMs) } })
}

t.test('a write under the high-water mark is not waited for, even over half the bound: no drain would come', async (t) => {
  const socket = slowWritable(64 * 1024, 50)
  const written = writeWaiting(socket, 'x'.repeat(10_000), 1024)
  const outcome = await Promise.race([written.then(() => 'returned'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))])
  t.equal(outcome, 'returned', '10,000 bytes unsent, over half of a 1,024-byte bound, under the 64 KiB mark')
})

t.test('a write that fills the buffer is waited for until it drains, when over half the bound', async (t) => {
  const socket = slowWritable(1024, 100)
  const started = Date.now()
  await writeWaiting(socket, 'x'.repeat(10_000), 4096)
  t.ok(Date.now() - started >= 90, 'waited for the drain')
  t.equal(socket.writableLength, 0)
})

t.test('a socket that fails or closes while waited for ends the wait, without an error', async (t) => {
  const socket = slowWritable(1024, 1000)
  socket.on('error', () => {})
  const written = writeWaiting(socket, 'x'.repeat(10_000), 4096)
  socket.destroy(new Error('read ECONNRESET'))
  await written
  t.pass('resolved')
})
