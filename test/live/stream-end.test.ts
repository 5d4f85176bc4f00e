import t from 'tap'
import { PassThrough } from 'node:stream'
import type { Socket } from 'node:net'
import { StreamSubscriber, StreamSubscribers } from '../../src/live/stream-subscribers.js'

/** A socket stand-in (named so): what the subscribers write, and whether they end and destroy it. */
function fakeSocket () {
  const socket = new PassThrough() as unknown as Socket & { written: string, destroyedAt?: number }
  socket.written = ''
  const write = socket.write.bind(socket)
  socket.write = ((chunk: string | Buffer) => { socket.written += String(chunk); return write(chunk) }) as Socket['write']
  socket.on('data', () => {})
  return socket
}

/** Two streams added to `streams`: one in its start_date replay, one live. */
function replayingAndLive (streams: StreamSubscribers) {
  const filter = { entities: undefined, scope: undefined, category: undefined, messageCodes: undefined }
  const replaying = new StreamSubscriber(fakeSocket(), filter, '', 0)
  replaying.held = []
  replaying.replayFrom = '2025-01-03T12:00:00.123Z'
  const live = new StreamSubscriber(fakeSocket(), filter, '', 0)
  streams.add(replaying)
  streams.add(live)
  return { replaying, live }
}

t.test('a stream ended during its start_date replay is told from when to backfill (reset), then ended and destroyed; a live one just ends', async (t) => {
  const streams = new StreamSubscribers({ maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 30, heartbeatMs: 60_000 }, { info () {} })
  t.teardown(() => streams.endAll())
  const { replaying, live } = replayingAndLive(streams)
  t.equal(streams.count, 2)
  streams.end(replaying, 'a test')
  streams.end(live, 'a test')
  const written = (replaying.socket as unknown as { written: string }).written
  t.equal(written, 'event: reset\ndata: {"since":"2025-01-03T12:00:00.123Z"}\n\n', 'the reset first')
  t.equal((live.socket as unknown as { written: string }).written, '', 'a live stream gets no reset')
  t.equal(streams.count, 0)
  t.ok(replaying.closed && live.closed)
  await new Promise((resolve) => setTimeout(resolve, 2200))
  t.ok(replaying.socket.destroyed && live.socket.destroyed, 'destroyed after the grace period')
})

t.test('a shutdown during a start_date replay tells the stream from when to backfill (reset) before it ends it, as end() does', async (t) => {
  const streams = new StreamSubscribers({ maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 30, heartbeatMs: 60_000 }, { info () {} })
  const { replaying, live } = replayingAndLive(streams)
  streams.endAll()
  t.equal((replaying.socket as unknown as { written: string }).written, 'event: reset\ndata: {"since":"2025-01-03T12:00:00.123Z"}\n\n')
  t.equal((live.socket as unknown as { written: string }).written, '', 'a live stream gets no reset')
  t.equal(streams.count, 0)
})

t.test('the IDs a replay sent while their ingest was on its way are dropped from live deliveries once each, and forgotten once nothing is being written', async (t) => {
  const streams = new StreamSubscribers({ maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 30, heartbeatMs: 60_000 }, { info () {} })
  t.teardown(() => streams.endAll())
  const stream = new StreamSubscriber(fakeSocket(), { entities: undefined, scope: undefined, category: undefined, messageCodes: undefined }, '', 0)
  streams.add(stream)
  stream.replayedWhileWritten.add('sent-1')
  stream.replayedWhileWritten.add('never-published')
  const event = (seq: number, id: string) => ({ seq, json: `{"message_id":"${id}"}`, message: { message_id: id, message_code: 'C', message_category: 'alert' as const, date_time: '2025-01-01T00:00:00.000Z', device_id: 'd', space_id: 's' } })
  const known = { knowsEntityOf: () => true }
  streams.deliver([event(1, 'sent-1'), event(2, 'new-1')], (seq) => `log-${seq}`, known, false)
  const written = () => (stream.socket as unknown as { written: string }).written
  t.notMatch(written(), 'sent-1', 'the replayed one is not sent again')
  t.match(written(), 'new-1')
  t.same([...stream.replayedWhileWritten], ['never-published'], 'an ingest is still on its way: kept')
  streams.deliver([event(3, 'new-2')], (seq) => `log-${seq}`, known, true)
  t.match(written(), 'new-2')
  t.equal(stream.replayedWhileWritten.size, 0, 'nothing being written: forgotten')
})

t.test('a stream added after endAll (the provider shutting down) is ended at once, not kept', async (t) => {
  const streams = new StreamSubscribers({ maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 30, heartbeatMs: 60_000 }, { info () {} })
  streams.endAll()
  t.equal(streams.ended, true)
  let ended = 0
  const socket = { write: () => true, end: () => { ended++ }, destroy () {}, writableLength: 0, destroyed: false }
  const stream = new StreamSubscriber(socket as unknown as Socket, { entities: undefined }, '', 0)
  streams.add(stream)
  t.equal(streams.count, 0)
  t.equal(stream.closed, true)
  t.equal(ended, 1)
})

t.test('a stream ended for a reload is given its cursor, never past an event it was not handed for an entity this process did not know yet', async (t) => {
  const streams = new StreamSubscribers({ maxClients: 10, maxClientsPerToken: 10, maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 30, heartbeatMs: 60_000 }, { info () {} })
  t.teardown(() => streams.endAll())
  const filter = { entities: undefined, scope: undefined, category: undefined, messageCodes: undefined }
  const event = (seq: number, device: string) => ({ seq, json: `{"n":${seq}}`, message: { message_id: `e-${seq}`, message_code: 'C', message_category: 'alert' as const, date_time: '2025-01-01T00:00:00.000Z', device_id: device, space_id: 's' } })
  // Another worker, reloaded first, accepted an event of `new`: this one does not know it yet.
  const known = { knowsEntityOf: (message: { device_id?: string }) => message.device_id !== 'new' }
  const cursorOf = (seq: number) => `log-${seq}`
  const first = new StreamSubscriber(fakeSocket(), filter, '', 0)
  streams.add(first)
  streams.deliver([event(1, 'd'), event(2, 'new'), event(3, 'd')], cursorOf, known)
  streams.endWhere(() => true, 'a test', cursorOf)
  t.match((first.socket as unknown as { written: string }).written, /id: log-1\n\n$/, 'its cursor before the event held back: its resume, judged by the reloaded registry, has it')
  // Once the reload has ended what it concerns, the next cursor is where the deliveries are.
  streams.registryReloaded()
  const second = new StreamSubscriber(fakeSocket(), filter, '', 3)
  streams.add(second)
  streams.deliver([event(4, 'd')], cursorOf, known)
  streams.endWhere(() => true, 'a test', cursorOf)
  t.match((second.socket as unknown as { written: string }).written, /id: log-4\n\n$/)
})
