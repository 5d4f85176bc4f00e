import t from 'tap'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ndjsonEvents } from '../src/ingest/ingest-body.js'
import { WrittenEvent } from '../src/live/live-bus.js'
import { encodeMessage } from '../src/store/message-json.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const line = (i: number) => encodeMessage({ message_id: `held-${i}`, message_code: 'C', message_category: 'alert', date_time: '2026-11-20T10:00:00.000Z', device_id: 'd-1', space_id: 's-1' })

/** An event written from a body of 1,000 lines, as the live plugin makes it, and a weak reference to that body. */
function written (): { event: WrittenEvent, body: WeakRef<Buffer> } {
  const body = Buffer.from(Array.from({ length: 1000 }, (_, i) => line(i)).join('\n') + '\n')
  const lines = ndjsonEvents(body)!
  const first = lines[0]!
  if ('problem' in first) throw new Error(first.problem)
  return { event: new WrittenEvent(first.event, first.json), body: new WeakRef(body) }
}

t.test('a written event read by a stream (message and text) no longer holds the body its line came in', async (t) => {
  const { event, body } = written()
  t.equal(event.message.message_id, 'held-0')
  t.equal(event.json, line(0))
  t.equal(event.epochMs, Date.UTC(2026, 10, 20, 10))
  gc()
  await new Promise((resolve) => setImmediate(resolve))
  gc()
  t.equal(body.deref(), undefined, 'the body was collected while the event lives on')
  t.equal(event.json, line(0), 'and the event still reads the same')
})

t.test('a written event not read yet keeps the bytes it will be read from', async (t) => {
  const { event, body } = written()
  gc()
  t.not(body.deref(), undefined)
  t.equal(event.bytes!.end - event.bytes!.start, Buffer.byteLength(line(0)))
  t.equal(event.json, line(0))
})
