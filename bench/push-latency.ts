import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_MQTT_TOPIC_PREFIX } from '../src/live/mqtt-topic.js'
import { ingestHeaders, ingestOutcome, post, postAgent, runOpenLoop } from './ingest-load.js'
import type { LiveEventSource } from './live-events.js'
import { log } from './log.js'
import type { Provider } from './provider.js'
import { startSubscribers, type DeliveryStats, type SubscriberResult } from './push-subscribers.js'
import { RssSampler, treeCpuSeconds, treeRssBytes } from './rss.js'
import { latencyOf } from './stats.js'

const MB = 1024 * 1024
/** How long deliveries may take after the last post was answered before the missing ones count as missing. */
const DELIVERY_GRACE_MS = 10_000
/** Streams opened at once while connecting. */
const CONNECT_CONCURRENCY = 200

/** One push latency measurement: subscribers connected, events posted at a rate, receipts timed. */
export interface PushRun {
  streams: number
  /** Streams that could not connect (and why, the first one). */
  failedStreams: number
  firstFailure: string | undefined
  connectSec: number
  /** The MQTT subscriber's, when there is one. */
  mqtt: boolean
  ratePerSec: number
  perPost: number
  intervalMs: number
  durationSec: number
  posted: {
    posts: number
    events: number
    statuses: Record<string, number>
    unexpectedStatuses: number
    errors: number
    refused: number
    /** From sending a post to its whole answer. */
    postLatencyMs: { p50: number, p99: number, max: number }
    /** The latest a post left after its time in the schedule. */
    maxLagMs: number
  }
  sse: DeliveryStats
  mqttDelivery: DeliveryStats | undefined
  closedEarly: number
  /** The subscribers' clock against the poster's: the offset applied and the IPC round trip it was measured over. */
  clock: { offsetMs: number, rttMs: number }
  /** The provider's process tree: before the streams connected, once connected, the peak while events flowed, after they left. */
  rssMB: { before: number, connected: number, peak: number, after: number }
  /**
   * CPU used from the first post to the last delivery (or the grace's end), as a share of one
   * core: the provider's, and the subscribers' process's (both on the machine's cores).
   */
  cpu: { seconds: number, providerPercent: number, subscribersPercent: number }
}

export interface PushSetup {
  provider: Provider
  token: string
  ingestToken: string
  /** Of this run alone: its events are indexes 0 … posts × perPost - 1 (their IDs have its prefix). */
  source: LiveEventSource
  streams: number
  mqttUrl: string | undefined
  ratePerSec: number
  perPost: number
  durationSec: number
  rssSampleMs: number
}

/** Milliseconds since the epoch, sub-millisecond, comparable between processes of one machine. */
const epochNow = () => performance.timeOrigin + performance.now()

/**
 * Connects the subscribers (a process of their own), then posts `perPost` new events every
 * 1000 × perPost / ratePerSec ms for durationSec from this process, then waits for every
 * delivery (or DELIVERY_GRACE_MS), and has the subscribers' process compute each delivery's
 * latency: its receipt minus the time this process got the 200 of the post that carried it.
 */
export async function measurePush (setup: PushSetup, context: string): Promise<PushRun> {
  const { provider, source, perPost, ratePerSec, durationSec } = setup
  const intervalMs = 1000 * perPost / ratePerSec
  const posts = Math.round(durationSec * 1000 / intervalMs)
  const events = posts * perPost
  const baseMs = Math.floor(Date.now())
  const clock = () => epochNow() - baseMs
  const before = treeRssBytes(provider.pid)
  log(`${context}: connecting ${setup.streams} streams${setup.mqttUrl === undefined ? '' : ' and an MQTT subscriber'} (a process of their own)`)
  const subscribers = await startSubscribers({
    streamUrl: `${provider.url}/svc/v2/events/stream`,
    token: setup.token,
    streams: setup.streams,
    connectConcurrency: CONNECT_CONCURRENCY,
    ...(setup.mqttUrl === undefined ? {} : { mqttUrl: setup.mqttUrl, mqttTopic: `${DEFAULT_MQTT_TOPIC_PREFIX}/#` }),
    prefix: source.prefix,
    events,
    baseMs
  })
  const sampler = new RssSampler(provider.pid, setup.rssSampleMs)
  try {
    log(`${context}: ${subscribers.streams} streams connected in ${subscribers.connectSec.toFixed(1)} s${subscribers.failed > 0 ? `; ${subscribers.failed} failed (${subscribers.firstFailure ?? ''})` : ''}`)
    // The provider settles after the connections (their buffers, the garbage of their requests).
    await sleep(1000)
    const connected = treeRssBytes(provider.pid)
    await sampler.reset()
    const calibration = await subscribers.calibrate(clock)

    const bodies = Array.from({ length: posts }, (_, i) => Buffer.from(source.ndjson(i * perPost, perPost)))
    const agent = postAgent(16)
    const url = `${provider.url}/ingest/events`
    const headers = ingestHeaders(setup.ingestToken)
    log(`${context}: posting ${ratePerSec} events/s (${perPost} per POST every ${intervalMs} ms) for ${durationSec} s`)
    let run
    const cpuStart = { at: performance.now(), provider: treeCpuSeconds(provider.pid), subscribers: treeCpuSeconds(subscribers.pid) }
    try {
      run = await runOpenLoop(posts, async (index, onResponse) => ingestOutcome(await post(agent, url, headers, bodies[index]!, onResponse)), intervalMs, clock)
    } finally {
      agent.destroy()
    }
    const written = run.events
    const deadline = Date.now() + DELIVERY_GRACE_MS
    let progress = await subscribers.progress()
    while ((progress.sse < written * subscribers.streams || (setup.mqttUrl !== undefined && progress.mqtt < written)) && Date.now() < deadline) {
      await sleep(100)
      progress = await subscribers.progress()
    }
    const cpuSeconds = (performance.now() - cpuStart.at) / 1000
    const cpu = {
      seconds: cpuSeconds,
      providerPercent: 100 * (treeCpuSeconds(provider.pid) - cpuStart.provider) / cpuSeconds,
      subscribersPercent: 100 * (treeCpuSeconds(subscribers.pid) - cpuStart.subscribers) / cpuSeconds
    }
    const peak = (await sampler.read()).peakBytes
    const result: SubscriberResult = await subscribers.result(run.sentAt, run.answeredAt, perPost, calibration.offsetMs)
    await subscribers.close()
    await sleep(1000)
    if (provider.child.exited()) throw new Error(`${context}: the provider exited: ${provider.child.output()}`)
    const after = treeRssBytes(provider.pid)
    const postLatency = latencyOf(Float64Array.from(run.latenciesMs))
    const pushRun: PushRun = {
      streams: subscribers.streams,
      failedStreams: subscribers.failed,
      firstFailure: subscribers.firstFailure,
      connectSec: subscribers.connectSec,
      mqtt: setup.mqttUrl !== undefined,
      ratePerSec,
      perPost,
      intervalMs,
      durationSec,
      posted: {
        posts: run.posts,
        events: run.events,
        statuses: run.statuses,
        unexpectedStatuses: run.unexpectedStatuses,
        errors: run.errors,
        refused: run.refused,
        postLatencyMs: { p50: postLatency.p50, p99: postLatency.p99, max: postLatency.max },
        maxLagMs: run.maxLagMs
      },
      sse: result.sse,
      mqttDelivery: result.mqtt,
      closedEarly: result.closedEarly,
      clock: calibration,
      rssMB: { before: before / MB, connected: connected / MB, peak: Math.max(peak, connected) / MB, after: after / MB },
      cpu
    }
    const describe = (stats: DeliveryStats) => `p50 ${stats.latencyMs.p50.toFixed(2)} ms, p99 ${stats.latencyMs.p99.toFixed(2)} ms, max ${stats.latencyMs.max.toFixed(1)} ms, ${stats.missing} missing`
    log(`${context}: ${run.events} events posted; streams: ${describe(result.sse)}${result.mqtt === undefined ? '' : `; MQTT: ${describe(result.mqtt)}`}; ` +
      `CPU: provider ${cpu.providerPercent.toFixed(0)}%, subscribers ${cpu.subscribersPercent.toFixed(0)}% of a core`)
    return pushRun
  } finally {
    await sampler.stop()
    await subscribers.close()
  }
}

/** Waits until the provider says its MQTT broker is connected (the readiness probe's `mqtt`). */
export async function waitForBroker (provider: Provider, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${provider.url}/health/ready`, { signal: AbortSignal.timeout(2000) })
      const health = await response.json() as { mqtt?: string }
      if (health.mqtt === 'connected') return
    } catch {}
    await sleep(100)
  }
  throw new Error(`the provider's MQTT broker was not connected within ${timeoutMs / 1000} s: ${provider.child.output()}`)
}

/** The soft limit of open files of this process (its children inherit it), from /proc/self/limits. */
export function openFilesLimit (): number {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    if (match !== null) return match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1])
  } catch {}
  return Number.POSITIVE_INFINITY
}
