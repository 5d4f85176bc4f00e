import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Message } from '../schemas/message.js'
import { slotOf, toLineProtocol } from '../src/store/influx/event-point.js'
import { toIndexLine } from '../src/store/influx/message-id-index.js'
import { runAppendCeiling } from './append-ceiling.js'
import { ingestHeaders, ingestOutcome, post, postAgent, runClosedLoop, type BatchOutcome, type ClosedLoopRun } from './ingest-load.js'
import type { LiveEventSource } from './live-events.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import type { Provider } from './provider.js'
import { treeRssBytes } from './rss.js'
import { latencyOf } from './stats.js'

const MB = 1024 * 1024

/** One contender's rounds, pooled. */
export interface IngestRun {
  rounds: number
  batches: number
  /** Events the target took (the provider: written, as it answered). */
  events: number
  durationSec: number
  eventsPerSec: number
  /** Per batch, from sending it to its whole answer (a ceiling: to the end of its write). */
  batchLatencyMs: { p50: number, p99: number, max: number }
  perRound: Array<{ eventsPerSec: number, exhausted: boolean }>
  statuses: Record<string, number>
  unexpectedStatuses: number
  errors: number
  /** Events the provider refused or found already stored: none are expected (every event is new). */
  refused: number
  unchanged: number
}

/** The provider's ingest on one store against its ceiling, in turns. */
export interface IngestComparison {
  store: 'memory' | 'influxdb'
  batchEvents: number
  clients: number
  /** What the store held before (so the figures can be read against it). */
  storedBefore: string
  ceilingDescription: string
  provider: IngestRun
  ceiling: IngestRun
  /** Provider events/s as a share of the ceiling's. */
  ratio: number
  /** The provider's process tree before its first batch and after its last (memory: every written event stays in memory). */
  providerRssMB: { start: number, end: number }
}

/** Something that takes batches: the provider, or a ceiling. */
interface IngestContender {
  label: string
  /**
   * Makes batches first … first + count - 1 (before the clock starts), then takes them for
   * durationSec. A ceiling that needs no new events may ignore first and count.
   */
  run (first: number, count: number, durationSec: number): Promise<ClosedLoopRun>
}

/** Before anything was measured: a guess of events/s to make batches for. */
const FIRST_GUESS_PER_SEC = 50_000
/**
 * At most this many batches are made for one run (4 million events, ~880 MB of NDJSON). With
 * 1,000 the memory store's ingest (300,000–400,000 events/s) used them up in about 3 s of its
 * 5 s rounds, every round, so its rate was taken over short rounds; with 2,500, two of three
 * rounds at 594,000–612,000 events/s ended after about 4 s (the run of 5b1cfd6).
 */
const MAX_BATCHES = 4000

function summariseIngest (runs: readonly ClosedLoopRun[]): IngestRun {
  const durationSec = runs.reduce((sum, run) => sum + run.durationSec, 0)
  const events = runs.reduce((sum, run) => sum + run.events, 0)
  const latency = latencyOf(Float64Array.from(runs.flatMap((run) => run.latenciesMs)))
  const statuses: Record<string, number> = {}
  for (const run of runs) for (const [status, count] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  const sum = (key: 'batches' | 'unexpectedStatuses' | 'errors' | 'refused' | 'unchanged') => runs.reduce((total, run) => total + run[key], 0)
  return {
    rounds: runs.length,
    batches: sum('batches'),
    events,
    durationSec,
    eventsPerSec: durationSec > 0 ? events / durationSec : 0,
    batchLatencyMs: { p50: latency.p50, p99: latency.p99, max: latency.max },
    perRound: runs.map((run) => ({ eventsPerSec: run.durationSec > 0 ? run.events / run.durationSec : 0, exhausted: run.exhausted })),
    statuses,
    unexpectedStatuses: sum('unexpectedStatuses'),
    errors: sum('errors'),
    refused: sum('refused'),
    unchanged: sum('unchanged')
  }
}

/**
 * Warm-up, then rounds in turns (provider, ceiling, provider, ...), as the other scenarios.
 * Each run gets batches made for it beforehand, from a range of event indexes no earlier run
 * used, about twice what its contender took per second in its last run (first: a guess); a run
 * that uses them up ends early, and its rate is what it took over the time it ran.
 */
async function alternateIngest (contenders: readonly IngestContender[], profile: Profile, context: string, firstBatch: number): Promise<ClosedLoopRun[][]> {
  const { ingestBatch, ingestClients } = profile.live
  const estimates = contenders.map(() => FIRST_GUESS_PER_SEC)
  let nextBatch = firstBatch
  const batchesFor = (contender: number, durationSec: number) =>
    Math.min(MAX_BATCHES, Math.ceil(estimates[contender]! * durationSec * 2 / ingestBatch) + 2 * ingestClients)
  const turn = async (durationSec: number, record: (index: number, run: ClosedLoopRun) => void) => {
    const counts = contenders.map((_, index) => batchesFor(index, durationSec))
    const first = nextBatch
    nextBatch += Math.max(...counts)
    for (const [index, contender] of contenders.entries()) {
      const run = await contender.run(first, counts[index]!, durationSec)
      const rate = run.durationSec > 0 ? run.events / run.durationSec : 0
      // A run that ran out was held back by its batches: the next one gets more.
      estimates[index] = Math.max(1000, run.exhausted ? rate * 2 : rate)
      record(index, run)
    }
  }
  if (profile.warmupSec > 0) await turn(profile.warmupSec, () => {})
  const samples: ClosedLoopRun[][] = contenders.map(() => [])
  for (let round = 0; round < profile.rounds; round++) {
    await turn(profile.durationSec, (index, run) => {
      samples[index]!.push(run)
      const rate = run.durationSec > 0 ? run.events / run.durationSec : 0
      log(`${context}: round ${round + 1}/${profile.rounds} ${contenders[index]!.label}: ${Math.round(rate)} events/s` +
        `${run.exhausted ? ' (ran out of the batches made for it: ended early)' : ''}${run.errors + run.unexpectedStatuses > 0 ? `; ${run.errors} errors, ${run.unexpectedStatuses} unexpected statuses` : ''}`)
    })
  }
  return samples
}

/** The provider taking batches of new events on POST /ingest/events. */
function providerContender (provider: Provider, ingestToken: string, source: LiveEventSource, profile: Profile): IngestContender {
  const { ingestBatch, ingestClients } = profile.live
  const url = `${provider.url}/ingest/events`
  const headers = ingestHeaders(ingestToken)
  return {
    label: 'provider',
    async run (first, count, durationSec) {
      const bodies = Array.from({ length: count }, (_, i) => Buffer.from(source.ndjson((first + i) * ingestBatch, ingestBatch)))
      const agent = postAgent(ingestClients)
      try {
        // A batch partly refused counts what it wrote; the refusals are reported (none are expected).
        return await runClosedLoop(count, async (index) => ingestOutcome(await post(agent, url, headers, bodies[index]!)), ingestClients, durationSec)
      } finally {
        agent.destroy()
      }
    }
  }
}

function comparison (store: IngestComparison['store'], profile: Profile, storedBefore: string, ceilingDescription: string, samples: ClosedLoopRun[][], rss: { start: number, end: number }): IngestComparison {
  const provider = summariseIngest(samples[0]!)
  const ceiling = summariseIngest(samples[1]!)
  return {
    store,
    batchEvents: profile.live.ingestBatch,
    clients: profile.live.ingestClients,
    storedBefore,
    ceilingDescription,
    provider,
    ceiling,
    ratio: provider.eventsPerSec / ceiling.eventsPerSec,
    providerRssMB: { start: rss.start / MB, end: rss.end / MB }
  }
}

/** Batches reserved at the start of the index range for the append ceiling's file. */
const APPEND_POOL_BATCHES = 50

/**
 * The memory-store provider (on a scratch copy of the events file) against a bare script that
 * appends the same kind of NDJSON batches to a file with fdatasync after each, serially, at the
 * same number of clients.
 */
export async function measureMemoryIngest (provider: Provider, ingestToken: string, source: LiveEventSource, profile: Profile, scratch: string, storedBefore: string): Promise<IngestComparison> {
  const { ingestBatch, ingestClients } = profile.live
  const poolFile = join(scratch, 'append-ceiling-batches.ndjson')
  const targetFile = join(scratch, 'append-ceiling-target.ndjson')
  await writeFile(poolFile, source.ndjson(0, APPEND_POOL_BATCHES * ingestBatch))
  const ceiling: IngestContender = {
    label: 'append ceiling',
    async run (_first, _count, durationSec) {
      // A new file each run: what it appends is thrown away.
      await rm(targetFile, { force: true })
      try {
        return await runAppendCeiling({ batchesFile: poolFile, batchLines: ingestBatch, targetFile, clients: ingestClients, durationSec })
      } finally {
        await rm(targetFile, { force: true })
      }
    }
  }
  log(`ingest/memory: ${ingestClients} clients posting batches of ${ingestBatch} new events, against appending the same NDJSON with fdatasync`)
  const start = treeRssBytes(provider.pid)
  try {
    const samples = await alternateIngest([providerContender(provider, ingestToken, source, profile), ceiling], profile, 'ingest/memory', APPEND_POOL_BATCHES)
    return comparison('memory', profile, storedBefore,
      'a bare script: each batch\'s NDJSON appended to a file, fdatasync, one batch at a time',
      samples, { start, end: treeRssBytes(provider.pid) })
  } finally {
    await rm(poolFile, { force: true })
  }
}

/** The line protocol the provider writes for a batch of new events: the event points, then their index points. */
function influxWrites (measurement: string, messages: readonly Message[]): { events: Buffer, index: Buffer } {
  const events: string[] = []
  const index: string[] = []
  for (const message of messages) {
    const epochMs = Date.parse(message.date_time)
    const slot = slotOf(message.message_id)
    events.push(toLineProtocol(measurement, message, epochMs, slot))
    index.push(toIndexLine(measurement, message, epochMs, slot))
  }
  return { events: Buffer.from(events.join('\n')), index: Buffer.from(index.join('\n')) }
}

export interface InfluxTarget {
  url: string
  database: string
}

/**
 * The InfluxDB provider (writing to a fresh measurement of an empty database) against the same
 * points posted straight to influxd's /write (into another measurement of that database) at the
 * same number of clients: per batch,
 * the event points in one write, then their message_id index points in another, as the provider
 * writes them (src/store/influx/influx-event-writer.ts, with its own toLineProtocol and toIndexLine),
 * less the provider's writer stamp: one more short line in each of its requests (writer-stamps.ts).
 */
export async function measureInfluxIngest (provider: Provider, ingestToken: string, source: LiveEventSource, profile: Profile, influx: InfluxTarget, measurements: { provider: string, ceiling: string }): Promise<IngestComparison> {
  const { ingestBatch, ingestClients } = profile.live
  const writeUrl = `${influx.url}/write?${new URLSearchParams({ db: influx.database, precision: 'ns' })}`
  const headers = { 'content-type': 'text/plain; charset=utf-8' }
  const ceiling: IngestContender = {
    label: 'raw InfluxDB write',
    async run (first, count, durationSec) {
      const writes = Array.from({ length: count }, (_, i) => influxWrites(measurements.ceiling, source.events((first + i) * ingestBatch, ingestBatch)))
      const agent = postAgent(ingestClients)
      try {
        return await runClosedLoop(count, async (index): Promise<BatchOutcome> => {
          const { events, index: indexLines } = writes[index]!
          const first = await post(agent, writeUrl, headers, events)
          if (first.status !== 204) return { status: first.status, ok: false, events: 0, refused: 0, unchanged: 0 }
          const second = await post(agent, writeUrl, headers, indexLines)
          return { status: second.status, ok: second.status === 204, events: second.status === 204 ? ingestBatch : 0, refused: 0, unchanged: 0 }
        }, ingestClients, durationSec)
      } finally {
        agent.destroy()
      }
    }
  }
  log(`ingest/influxdb: ${ingestClients} clients posting batches of ${ingestBatch} new events (measurement ${measurements.provider}), against their points posted to /write (measurement ${measurements.ceiling})`)
  const start = treeRssBytes(provider.pid)
  const samples = await alternateIngest([providerContender(provider, ingestToken, source, profile), ceiling], profile, 'ingest/influxdb', 0)
  return comparison('influxdb', profile, 'an empty database of its own',
    'the same points posted to influxd\'s /write: the event points, then their index points',
    samples, { start, end: treeRssBytes(provider.pid) })
}

/** One InfluxQL statement that answers nothing (CREATE, DROP); throws when InfluxDB refuses it. */
export async function influxStatement (url: string, statement: string): Promise<void> {
  const response = await fetch(`${url}/query`, { method: 'POST', body: new URLSearchParams({ q: statement }), signal: AbortSignal.timeout(120_000) })
  const text = await response.text()
  if (response.status !== 200 || text.includes('"error"')) throw new Error(`InfluxDB refused ${statement}: ${response.status} ${text.slice(0, 200)}`)
}
