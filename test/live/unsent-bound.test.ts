import t from 'tap'
import type { Socket } from 'node:net'
import { namedFrame, StreamSubscriber, StreamSubscribers, type StreamLimits } from '../../src/live/stream-subscribers.js'
import type { LiveEvent } from '../../src/live/live-event.js'

/**
 * A socket stand-in (named so): one whose client reads nothing keeps every byte written unsent
 * (`writableLength`), one whose client reads keeps none.
 */
function fakeSocket (reads: boolean | 'a little behind') {
  const socket = {
    writableLength: 0,
    written: 0,
    destroyed: false,
    write (chunk: string | Buffer) {
      socket.written += chunk.length
      if (reads === 'a little behind') socket.writableLength = Math.min(100, socket.writableLength + chunk.length)
      else if (!reads) socket.writableLength += chunk.length
      return true
    },
    end () {},
    destroy () { socket.destroyed = true; socket.writableLength = 0 }
  }
  return socket
}

const everything = { entities: undefined, scope: undefined, category: undefined, messageCodes: undefined }
const known = { knowsEntityOf: () => true }
let seq = 0
/** A delivery of `count` events of about 100 bytes each. */
const delivery = (count: number): LiveEvent[] => Array.from({ length: count }, () => {
  const id = `m-${++seq}`.padEnd(40, '.')
  const message = { message_id: id, message_code: 'C', message_category: 'alert' as const, date_time: '2025-01-01T00:00:00.000Z', device_id: 'd', space_id: 's' }
  return { seq, message, json: JSON.stringify(message) }
})

function subscribers (limits: Partial<StreamLimits>, logged: object[], cuts: Record<string, number> = {}) {
  const streams = new StreamSubscribers({ maxClients: 1000, maxClientsPerToken: 1000, maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 20, heartbeatMs: 60_000, ...limits }, { info (details) { logged.push(details) } }, (cut, count) => { cuts[cut] = (cuts[cut] ?? 0) + count })
  t.teardown(() => streams.endAll())
  return streams
}

function open (streams: StreamSubscribers, key: string, reads: boolean | 'a little behind') {
  const socket = fakeSocket(reads)
  const stream = new StreamSubscriber(socket as unknown as Socket, everything, key, seq)
  streams.add(stream)
  return { stream, socket }
}

t.test('streams of distinct filters that do not read: past STREAM_MAX_UNSENT_BYTES in all, those furthest behind are disconnected until under 3/4 of it; streams that read keep theirs', async (t) => {
  const logged: object[] = []
  const cuts: Record<string, number> = {}
  // About 41 kB a stream a delivery: 25 streams that do not read pass 1 MiB in their second.
  const streams = subscribers({ maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 20 }, logged, cuts)
  const readers = Array.from({ length: 5 }, (_, i) => open(streams, `reader-${i}`, true))
  const idle = Array.from({ length: 20 }, (_, i) => open(streams, `idle-${i}`, false))
  const late: Array<ReturnType<typeof open>> = []
  for (let round = 0; round < 8; round++) {
    // The late ones begin at the fifth delivery: less behind than the others.
    if (round === 4) for (let i = 0; i < 5; i++) late.push(open(streams, `late-${i}`, false))
    streams.deliver(delivery(200), (at) => `c-${at}`, known)
  }
  const kept = [...idle, ...late].filter(({ stream }) => !stream.closed)
  const unsent = kept.reduce((sum, { socket }) => sum + socket.writableLength, 0)
  t.ok(unsent <= 1 << 20 && kept.length > 0, `the unsent data in all (${unsent} B, ${kept.length} streams) stays within the bound`)
  t.ok(idle.filter(({ stream }) => stream.closed).every(({ socket }) => socket.destroyed), 'the streams disconnected: their connections destroyed')
  t.ok(readers.every(({ stream }) => !stream.closed), 'every stream that reads is kept')
  t.ok(late.every(({ stream }) => !stream.closed), 'those furthest behind went first: the late ones are kept')
  const lines = logged.filter((line) => 'maxUnsentBytes' in line) as unknown as Array<{ streams: number, unsentBytes: number }>
  t.ok(lines.length > 0 && lines.length <= 8 && lines.every((line) => line.unsentBytes > 7 / 8 * (1 << 20)), `${lines.length} lines logged, each for the streams disconnected together`)
  t.equal(logged.length, lines.length, 'no stream reached a bound of its own')
  const cut = [...idle, ...late].filter(({ stream }) => stream.closed).length
  t.same(cuts, { all_bound: cut }, `${cut} counted for the metric`)
})

t.test('streams of one filter share its frames: counted once, however many do not read', async (t) => {
  const logged: object[] = []
  const streams = subscribers({ maxBufferBytes: 1 << 20, maxUnsentBytes: 256 * 1024 }, logged)
  const idle = Array.from({ length: 50 }, () => open(streams, 'one-filter', false))
  // About 41 kB a delivery: 164 kB a stream, 8 MB as if each held its own.
  for (let round = 0; round < 4; round++) streams.deliver(delivery(200), (at) => `c-${at}`, known)
  t.ok(idle[0]!.socket.writableLength > 160_000, `each stream holds ${idle[0]!.socket.writableLength} B`)
  t.ok(idle.every(({ stream }) => !stream.closed), 'none disconnected: the frames they hold are one and the same')
  t.same(logged, [])
  // Another filter's frames, own ones: the bound of all is passed in the next deliveries, and
  // the streams furthest behind (those of the shared filter) go first.
  const other = open(streams, 'another-filter', false)
  for (let round = 0; round < 2; round++) streams.deliver(delivery(200), (at) => `c-${at}`, known)
  t.ok(logged.some((line) => 'maxUnsentBytes' in line), 'the bound of all was passed')
  t.ok(idle.every(({ stream }) => stream.closed), 'the shared filter\'s streams are furthest behind: disconnected')
  t.notOk(other.stream.closed, 'the other is kept')
})

t.test('a replay\'s or resume\'s own text counts as its own: streams of one filter writing their own copies are each counted', async (t) => {
  const logged: object[] = []
  const streams = subscribers({ maxBufferBytes: 256 * 1024, maxUnsentBytes: 256 * 1024 }, logged)
  const resuming = Array.from({ length: 10 }, () => open(streams, 'one-filter', false))
  const frame = 'x'.repeat(40 * 1024)
  // writeWaiting waits for a drain that never comes here: not awaited.
  for (const { stream } of resuming) streams.writeWaiting(stream, frame).catch(() => {})
  const kept = resuming.filter(({ stream }) => !stream.closed)
  const unsent = kept.reduce((sum, { socket }) => sum + socket.writableLength, 0)
  t.ok(unsent <= 256 * 1024, `${unsent} B unsent in all, within the bound`)
  t.ok(kept.length < 10 && kept.length >= 4, `${10 - kept.length} disconnected`)
})

t.test('streams that caught up leave the count: no one is disconnected for what was sent long ago', async (t) => {
  const logged: object[] = []
  const streams = subscribers({ maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 20, heartbeatMs: 50 }, logged)
  const slow = Array.from({ length: 20 }, (_, i) => open(streams, `slow-${i}`, false))
  for (let round = 0; round < 2; round++) {
    // About 41 kB a stream: 820 kB in all, within the bound.
    streams.deliver(delivery(200), (at) => `c-${at}`, known)
    t.ok(slow.every(({ stream }) => !stream.closed), `round ${round}: within the bound`)
    // They read what they had; a heartbeat passes.
    for (const { socket } of slow) socket.writableLength = 0
    await new Promise((resolve) => setTimeout(resolve, 120))
  }
  t.same(logged, [])
})

// The three below were found by a review (each failed before its fix).

t.test('a stream\'s own text, once sent, no longer makes it count alone: streams of one filter that wrote item_errors are still counted once for the frames they share', async (t) => {
  const logged: object[] = []
  const streams = subscribers({ maxBufferBytes: 1 << 20, maxUnsentBytes: 256 * 1024, heartbeatMs: 50 }, logged)
  const all = Array.from({ length: 10 }, () => open(streams, 'one-filter', true))
  for (const { stream } of all) streams.write(stream, namedFrame('item_errors', [{ id: 'x' }]))
  // Then none reads: four deliveries of about 41 kB, the same frames for all (164 kB shared).
  for (const { socket } of all) socket.write = (chunk: string | Buffer) => { socket.writableLength += chunk.length; return true }
  for (let round = 0; round < 4; round++) streams.deliver(delivery(200), (at) => `c-${at}`, known)
  // A heartbeat counts them.
  await new Promise((resolve) => setTimeout(resolve, 120))
  t.ok(all[0]!.socket.writableLength > 160_000, 'each holds the same 164 kB')
  t.ok(all.every(({ stream }) => !stream.closed), 'none disconnected')
  t.same(logged, [])
})

t.test('a shared frame is estimated by the most any stream of its filter holds of it, not by the first one\'s: a filter\'s stream that does not read behind one a little behind is counted', async (t) => {
  const logged: object[] = []
  const streams = subscribers({ maxBufferBytes: 1 << 20, maxUnsentBytes: 1 << 20 }, logged)
  const idle: Array<ReturnType<typeof open>> = []
  for (let i = 0; i < 20; i++) {
    open(streams, `filter-${i}`, 'a little behind')
    idle.push(open(streams, `filter-${i}`, false))
  }
  for (let round = 0; round < 8; round++) streams.deliver(delivery(200), (at) => `c-${at}`, known)
  const kept = idle.filter(({ stream }) => !stream.closed)
  const unsent = kept.reduce((sum, { socket }) => sum + socket.writableLength, 0)
  t.ok(unsent <= 1 << 20, `the unsent data in all (${unsent} B, ${kept.length} streams) stays within the bound`)
})

t.test('a delivery that brings a replayed stream nothing (all of it replayed), with nothing being written, forgets the replayed IDs: it shares its filter\'s frames again', async (t) => {
  const streams = subscribers({}, [])
  const { stream } = open(streams, '', true)
  stream.replayedWhileWritten.add('sent-1')
  stream.replayedWhileWritten.add('never-published')
  const event = { seq: seq + 1, json: '{"message_id":"sent-1"}', message: { message_id: 'sent-1', message_code: 'C', message_category: 'alert' as const, date_time: '2025-01-01T00:00:00.000Z', device_id: 'd', space_id: 's' } }
  streams.deliver([event], (at) => `log-${at}`, known, true)
  t.equal(stream.replayedWhileWritten.size, 0)
})

t.test('the estimate of the unsent data goes back to nothing at a heartbeat once the streams behind are gone', async (t) => {
  const streams = subscribers({ heartbeatMs: 50 }, [])
  const idle = Array.from({ length: 5 }, (_, i) => open(streams, `idle-${i}`, false))
  streams.deliver(delivery(50), (at) => `c-${at}`, known)
  t.ok(streams.unsentBytes > 0)
  for (const { stream } of idle) streams.remove(stream)
  await new Promise((resolve) => setTimeout(resolve, 120))
  t.equal(streams.unsentBytes, 0)
})

t.test('a heartbeat writes HEARTBEATS_PER_TURN streams a turn of the event loop, every open stream once', async (t) => {
  const { HEARTBEATS_PER_TURN } = await import('../../src/live/stream-subscribers.js')
  const streams = subscribers({ heartbeatMs: 40 }, [])
  const all = Array.from({ length: 2 * HEARTBEATS_PER_TURN + 500 }, (_, i) => open(streams, `s-${i}`, true))
  // The first heartbeat: the streams written by each turn.
  const byTurn: number[] = []
  const written = () => all.filter(({ socket }) => socket.written > 0).length
  await new Promise<void>((resolve) => {
    const sample = (): void => {
      const now = written()
      if (now > 0) byTurn.push(now)
      if (now === all.length) resolve()
      else setImmediate(sample)
    }
    setImmediate(sample)
  })
  t.ok(byTurn[0]! <= HEARTBEATS_PER_TURN, `${byTurn[0]} streams in the first turn`)
  t.ok(byTurn.length >= 3, `over ${byTurn.length} turns`)
  t.ok(all.every(({ socket }) => socket.written === ': keep-alive\n\n'.length), 'each once')
})
