import { join } from 'node:path'
import { connect, type Socket } from 'node:net'
import { connect as connectMqtt, type MqttClient } from 'mqtt'
import { projectRoot } from '../src/project-root.js'
import { startChild, stopChild, waitForExit, type Child } from './processes.js'
import { latencyOf } from './stats.js'

/**
 * The subscribers of the push latency measurement, in a process of their own (not the
 * provider's, not the one that posts): `streams` Server-Sent Events streams over raw TCP sockets
 * (an EventSource per stream would cost more than the provider at 10,000), and optionally one
 * MQTT subscriber (MQTT.js, QoS 1). Each notes when each event arrived, by its message_id
 * (`<prefix>-<index>`, read from the frames' data), on a clock the parent calibrates against its
 * own; once the parent has posted everything it hands over when each post was answered, and this
 * process turns the receipts into latencies.
 */
export interface SubscriberTask {
  /** http://host:port/svc/v2/events/stream */
  streamUrl: string
  token: string
  streams: number
  /** Streams being opened at once. */
  connectConcurrency: number
  mqttUrl?: string
  mqttTopic?: string
  /** Event IDs are `<prefix>-<index>`, index from 0 to events - 1. */
  prefix: string
  events: number
  /** Times are milliseconds since this (epoch ms), on both sides. */
  baseMs: number
}

/** How the events reached one kind of subscriber. */
export interface DeliveryStats {
  subscribers: number
  /** Deliveries owed: events whose post was answered × subscribers. */
  expected: number
  received: number
  /** Owed and never received. */
  missing: number
  duplicates: number
  /** Received before the posting client had its 200 (their latency counts as 0). */
  beforeAnswer: number
  /** Milliseconds from the post's 200 to the receipt, 0 for those that came first. */
  latencyMs: { p50: number, p99: number, max: number, mean: number }
  /** Milliseconds from sending the post to the receipt: with the time the provider took to answer it. */
  fromPostMs: { p50: number, p99: number, max: number }
}

export interface SubscriberResult {
  sse: DeliveryStats
  mqtt: DeliveryStats | undefined
  /** Streams the provider closed before the end. */
  closedEarly: number
}

type ToChild =
  | { type: 'ping', id: number }
  | { type: 'progress' }
  | { type: 'answers', sentAt: Array<number | null>, answeredAt: Array<number | null>, perPost: number, offsetMs: number }
  | { type: 'close' }

type FromChild =
  | { type: 'connected', streams: number, failed: number, firstFailure: string | undefined, connectSec: number }
  | { type: 'pong', id: number, at: number }
  | { type: 'progress', sse: number, mqtt: number, closedEarly: number }
  | { type: 'result', result: SubscriberResult }
  | { type: 'error', message: string }

export const SUBSCRIBER_TASK_VARIABLE = 'PUSH_SUBSCRIBER_TASK'

/** The parent's handle on the subscribers' process. */
export interface Subscribers {
  pid: number
  streams: number
  failed: number
  firstFailure: string | undefined
  connectSec: number
  /** This clock minus the subscribers' (ms), and the round trip it was measured over. */
  calibrate (clock: () => number): Promise<{ offsetMs: number, rttMs: number }>
  progress (): Promise<{ sse: number, mqtt: number, closedEarly: number }>
  result (sentAt: readonly number[], answeredAt: readonly number[], perPost: number, offsetMs: number): Promise<SubscriberResult>
  close (): Promise<void>
}

export async function startSubscribers (task: SubscriberTask): Promise<Subscribers> {
  const child: Child = startChild(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'push-subscribers.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', [SUBSCRIBER_TASK_VARIABLE]: JSON.stringify(task) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  const exited = waitForExit(child)
  const ask = async <T extends FromChild['type']>(message: ToChild | undefined, type: T): Promise<Extract<FromChild, { type: T }>> => new Promise((resolve, reject) => {
    const onMessage = (answer: FromChild) => {
      if (answer.type === 'error') {
        cleanup()
        reject(new Error(`the subscribers failed: ${answer.message}`))
      } else if (answer.type === type) {
        cleanup()
        resolve(answer as Extract<FromChild, { type: T }>)
      }
    }
    const onExit = () => {
      cleanup()
      reject(new Error(`the subscribers' process exited: ${child.output()}`))
    }
    const cleanup = () => {
      child.process.off('message', onMessage)
      child.process.off('exit', onExit)
    }
    child.process.on('message', onMessage)
    child.process.on('exit', onExit)
    if (message !== undefined) child.process.send(message)
  })
  let connected
  try {
    connected = await ask(undefined, 'connected')
  } catch (error) {
    await stopChild(child)
    throw error
  }
  let pings = 0
  return {
    pid: child.pid,
    streams: connected.streams,
    failed: connected.failed,
    firstFailure: connected.firstFailure,
    connectSec: connected.connectSec,
    async calibrate (clock) {
      // The round trip over IPC with the least delay bounds the offset best.
      let best = { offsetMs: 0, rttMs: Number.POSITIVE_INFINITY }
      for (let i = 0; i < 20; i++) {
        const sent = clock()
        const { at } = await ask({ type: 'ping', id: ++pings }, 'pong')
        const back = clock()
        if (back - sent < best.rttMs) best = { offsetMs: (sent + back) / 2 - at, rttMs: back - sent }
      }
      return best
    },
    async progress () {
      const { sse, mqtt, closedEarly } = await ask({ type: 'progress' }, 'progress')
      return { sse, mqtt, closedEarly }
    },
    async result (sentAt, answeredAt, perPost, offsetMs) {
      // NaN does not survive JSON: a post without answer goes as null.
      const orNull = (at: number) => Number.isFinite(at) ? at : null
      return (await ask({ type: 'answers', sentAt: sentAt.map(orNull), answeredAt: answeredAt.map(orNull), perPost, offsetMs }, 'result')).result
    },
    async close () {
      if (child.exited()) return
      child.process.send({ type: 'close' })
      const timer = setTimeout(() => { stopChild(child).catch(() => {}) }, 10_000)
      await exited
      clearTimeout(timer)
    }
  }
}

// ---- The subscribers' process ----

const clock = (baseMs: number) => () => performance.timeOrigin + performance.now() - baseMs

/** Every occurrence of `"message_id":"<prefix>-<digits>"` in data[from, to): the index, to `found`. */
function eachIndex (data: Buffer, to: number, pattern: Buffer, found: (index: number) => void): void {
  let at = data.indexOf(pattern, 0)
  while (at !== -1 && at < to) {
    let position = at + pattern.length
    let index = 0
    let digits = 0
    for (; position < data.length; position++) {
      const byte = data[position]!
      if (byte < 48 || byte > 57) break
      index = index * 10 + byte - 48
      digits++
    }
    if (digits > 0 && data[position] === 34) found(index)
    at = data.indexOf(pattern, position)
  }
}

async function runSubscribers (task: SubscriberTask): Promise<void> {
  const now = clock(task.baseMs)
  const send = (message: FromChild) => process.send?.(message)
  const pattern = Buffer.from(`"message_id":"${task.prefix}-`)
  const url = new URL(task.streamUrl)
  const request = `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${task.token}\r\naccept: text/event-stream\r\n\r\n`
  // Receipt times, as ms since baseMs: stream s's receipt of event i at i × streams + s.
  const sseTimes = new Float32Array(task.events * task.streams).fill(NaN)
  const mqttTimes = new Float32Array(task.events).fill(NaN)
  let sseReceived = 0
  let sseDuplicates = 0
  let mqttReceived = 0
  let mqttDuplicates = 0
  let closedEarly = 0
  let closing = false
  const sockets: Socket[] = []

  // Every socket reads into this one buffer (onread: no Buffer, no stream machinery per read);
  // what a read leaves unfinished is copied out before the next.
  const shared = Buffer.allocUnsafe(256 * 1024)
  const blankLine = Buffer.from('\n\n')
  const headersEnd = Buffer.from('\r\n\r\n')
  const openStream = (stream: number) => new Promise<void>((resolve, reject) => {
    let headersDone = false
    let pending: Buffer | undefined
    const onData = (chunk: Buffer) => {
      const at = now()
      let data = pending === undefined ? chunk : Buffer.concat([pending, chunk])
      pending = undefined
      if (!headersDone) {
        const end = data.indexOf(headersEnd)
        if (end === -1) {
          pending = Buffer.from(data)
          return
        }
        headersDone = true
        clearTimeout(timer)
        const statusLine = data.toString('latin1', 0, Math.min(end, data.indexOf('\r\n')))
        if (!statusLine.startsWith('HTTP/1.1 200')) {
          socket.destroy()
          reject(new Error(`answered ${statusLine}`))
          return
        }
        resolve()
        data = data.subarray(end + 4)
      }
      // Whole frames only (each ends with a blank line); the rest waits for the next read.
      const end = data.lastIndexOf(blankLine)
      if (end === -1) {
        if (data.length > 0) pending = Buffer.from(data)
        return
      }
      eachIndex(data, end, pattern, (index) => {
        if (index >= task.events) return
        const slot = index * task.streams + stream
        if (Number.isNaN(sseTimes[slot]!)) {
          sseTimes[slot] = at
          sseReceived++
        } else {
          sseDuplicates++
        }
      })
      if (end + 2 < data.length) pending = Buffer.from(data.subarray(end + 2))
    }
    const socket = connect({
      port: Number(url.port),
      host: url.hostname,
      noDelay: true,
      onread: {
        buffer: shared,
        callback: (bytes: number, buffer: Uint8Array) => {
          onData(Buffer.from(buffer.buffer, buffer.byteOffset, bytes))
          return true
        }
      }
    })
    sockets.push(socket)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error('no answer within 30 s'))
    }, 30_000)
    socket.on('connect', () => socket.write(request))
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      if (headersDone && !closing) closedEarly++
      reject(new Error('closed before the answer'))
    })
  })

  let mqtt: MqttClient | undefined
  if (task.mqttUrl !== undefined) {
    mqtt = connectMqtt(task.mqttUrl, { protocolVersion: 5, clean: true, reconnectPeriod: 500, connectTimeout: 5000 })
    mqtt.on('error', () => {})
    // Its PUBACKs are small writes: as the provider's publisher, no Nagle's algorithm (no wait for a delayed ACK).
    mqtt.on('connect', () => { (mqtt!.stream as Partial<import('node:net').Socket>).setNoDelay?.(true) })
    mqtt.on('message', (_topic, payload) => {
      const at = now()
      eachIndex(payload, payload.length, pattern, (index) => {
        if (index >= task.events) return
        if (Number.isNaN(mqttTimes[index]!)) {
          mqttTimes[index] = at
          mqttReceived++
        } else {
          mqttDuplicates++
        }
      })
    })
    const client = mqtt
    await new Promise<void>((resolve) => client.once('connect', () => resolve()))
    await mqtt.subscribeAsync(task.mqttTopic ?? '#', { qos: 1 })
  }

  const started = performance.now()
  let failed = 0
  let firstFailure: string | undefined
  let next = 0
  await Promise.all(Array.from({ length: Math.min(task.connectConcurrency, task.streams) }, async () => {
    while (next < task.streams) {
      const stream = next++
      try {
        await openStream(stream)
      } catch (error) {
        failed++
        firstFailure ??= (error as Error).message
      }
    }
  }))
  send({ type: 'connected', streams: task.streams - failed, failed, firstFailure, connectSec: (performance.now() - started) / 1000 })

  process.on('message', (message: ToChild) => {
    try {
      if (message.type === 'ping') send({ type: 'pong', id: message.id, at: now() })
      if (message.type === 'progress') send({ type: 'progress', sse: sseReceived, mqtt: mqttReceived, closedEarly })
      if (message.type === 'answers') {
        const posts = { sentAt: message.sentAt.map((at) => at ?? NaN), answeredAt: message.answeredAt.map((at) => at ?? NaN), perPost: message.perPost }
        const sse = deliveries(sseTimes, task.streams, sseDuplicates, posts, message.offsetMs, task.events)
        const mqttStats = mqtt === undefined ? undefined : deliveries(mqttTimes, 1, mqttDuplicates, posts, message.offsetMs, task.events)
        send({ type: 'result', result: { sse, mqtt: mqttStats, closedEarly } })
      }
      if (message.type === 'close') {
        closing = true
        for (const socket of sockets) socket.destroy()
        const done = () => process.exit(0)
        if (mqtt === undefined) done()
        else mqtt.endAsync(true).finally(done)
      }
    } catch (error) {
      send({ type: 'error', message: (error as Error).stack ?? String(error) })
    }
  })
  process.on('disconnect', () => process.exit(0))
}

/**
 * Latencies of one kind of subscriber: the receipt (moved to the parent's clock by adding
 * offsetMs) minus when the post that carried the event was answered, 0 when it came first.
 */
function deliveries (times: Float32Array, subscribers: number, duplicates: number, posts: { sentAt: readonly number[], answeredAt: readonly number[], perPost: number }, offsetMs: number, events: number): DeliveryStats {
  const { sentAt, answeredAt, perPost } = posts
  const latencies = new Float64Array(times.length)
  const fromPost = new Float64Array(times.length)
  let count = 0
  let expected = 0
  let missing = 0
  let beforeAnswer = 0
  for (let index = 0; index < events; index++) {
    const post = Math.floor(index / perPost)
    const answered = answeredAt[post]
    const sent = sentAt[post]!
    if (answered === undefined || Number.isNaN(answered)) continue
    expected += subscribers
    for (let s = 0; s < subscribers; s++) {
      const at = times[index * subscribers + s]!
      if (Number.isNaN(at)) {
        missing++
        continue
      }
      let latency = at + offsetMs - answered
      if (latency < 0) {
        beforeAnswer++
        latency = 0
      }
      fromPost[count] = at + offsetMs - sent
      latencies[count++] = latency
    }
  }
  const latency = latencyOf(latencies.subarray(0, count))
  const sinceSent = latencyOf(fromPost.subarray(0, count))
  return {
    subscribers,
    expected,
    received: count,
    missing,
    duplicates,
    beforeAnswer,
    latencyMs: { p50: latency.p50, p99: latency.p99, max: latency.max, mean: latency.mean },
    fromPostMs: { p50: sinceSent.p50, p99: sinceSent.p99, max: sinceSent.max }
  }
}

if (process.env[SUBSCRIBER_TASK_VARIABLE] !== undefined) {
  runSubscribers(JSON.parse(process.env[SUBSCRIBER_TASK_VARIABLE]) as SubscriberTask).catch((error: Error) => {
    process.send?.({ type: 'error', message: error.stack ?? String(error) })
    process.exitCode = 1
  })
}
