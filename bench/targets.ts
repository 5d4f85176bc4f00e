import type { CompressionResult } from './compression.js'
import type { LiveResult } from './live.js'
import type { LoadGrowthPoint } from './load-growth.js'
import type { ScenarioResult } from './measure-scenario.js'
import type { PipeliningAttackResult } from './pipelining-attack.js'
import type { PushRun } from './push-latency.js'

/** What every load run counts. */
interface RunCounts {
  /** Connection errors, timeouts included (autocannon counts them in both). */
  errors: number
  unexpectedStatuses: number
}

/** One target of one scenario row: printed pass or fail, never a reason to fail the run. */
export interface TargetCheck {
  scenario: string
  store: string
  target: string
  value: number
  limit: number
  pass: boolean
}

const check = (row: ScenarioResult, target: string, value: number, comparison: '>=' | '<=' | '<' | '==', limit: number): TargetCheck => ({
  scenario: row.scenario,
  store: row.store,
  target,
  value,
  limit,
  pass: comparison === '>=' ? value >= limit : comparison === '<=' ? value <= limit : comparison === '<' ? value < limit : value === limit
})

/** Every load run of a row: the provider, its ceilings, and the large scenario's extra runs. */
function everyRun (row: ScenarioResult): RunCounts[] {
  const runs: RunCounts[] = [row.provider, row.frameworkCeiling]
  if (row.storeCeiling !== undefined) runs.push(row.storeCeiling)
  if (row.large !== undefined) runs.push(row.large.smallAlone, row.large.smallUnderLoad, row.large.largeBeside)
  return runs
}

export function evaluateTargets (rows: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = []
  for (const row of rows) {
    const key = `${row.scenario}/${row.store}`
    // The serving-speed issue's targets (they replaced small's 50%).
    if (key === 'small/memory') checks.push(check(row, 'req/s ≥ 75% of the framework ceiling', row.ratios.framework.reqPerSec, '>=', 0.75))
    if (key === 'medium/memory') checks.push(check(row, 'req/s ≥ 50% of the framework ceiling', row.ratios.framework.reqPerSec, '>=', 0.5))
    if (key === 'rejected/memory' || key === 'unauthorised/memory') checks.push(check(row, 'req/s ≥ 90% of the framework ceiling', row.ratios.framework.reqPerSec, '>=', 0.9))
    if (key === 'specifications/memory') checks.push(check(row, 'req/s ≥ 80% of the framework ceiling', row.ratios.framework.reqPerSec, '>=', 0.8))
    if ((row.scenario === 'small' || row.scenario === 'medium') && row.store === 'influxdb' && row.ratios.store !== undefined) {
      checks.push(check(row, 'p50 ≤ 1.3× the raw InfluxDB query', row.ratios.store.p50, '<=', 1.3))
      checks.push(check(row, 'req/s ≥ 75% of the raw InfluxDB query', row.ratios.store.reqPerSec, '>=', 0.75))
    }
    if (row.scenario === 'large') {
      checks.push(check(row, 'RSS growth < 100 MB', row.rss.growthMB, '<', 100))
      if (row.large !== undefined) {
        checks.push(check(row, 'small p99 beside large < 3× small p99 alone', row.large.p99Ratio, '<', 3))
        checks.push(check(row, 'the answer is streamed (chunked)', row.large.streamed ? 1 : 0, '==', 1))
      }
    }
    if (row.scenario === 'lookup' && row.store === 'influxdb') {
      const small = rows.find((other) => other.scenario === 'small' && other.store === 'influxdb')
      if (small !== undefined) checks.push(check(row, 'p50 ≤ 10× the small scenario\'s p50 on the same store', row.provider.latencyMs.p50 / small.provider.latencyMs.p50, '<=', 10))
    }
    const runs = everyRun(row)
    checks.push(check(row, 'no errors or timeouts', runs.reduce((sum, run) => sum + run.errors, 0), '==', 0))
    checks.push(check(row, 'no unexpected statuses', runs.reduce((sum, run) => sum + run.unexpectedStatuses, 0), '==', 0))
  }
  return checks
}

/** Loading the memory store (the serving-speed issue): the whole file, against a bare JSON.parse of its lines. */
export function evaluateLoadTargets (points: readonly LoadGrowthPoint[]): TargetCheck[] {
  const whole = points.at(-1)
  if (whole === undefined) return []
  return [{ scenario: 'load', store: 'memory', target: `load time ≤ 2× a bare JSON.parse of the same lines (${whole.events} events)`, value: whole.ratio, limit: 2, pass: whole.ratio <= 2 }]
}

/** The pipelined attack's targets (the hardening issue's first item). */
export function evaluateAttackTargets (attack: PipeliningAttackResult): TargetCheck[] {
  const row = { scenario: 'pipelined attack', store: 'memory' }
  const targetOf = (target: string, value: number, pass: boolean, limit: number): TargetCheck => ({ ...row, target, value, limit, pass })
  return [
    targetOf('RSS growth < 200 MB', attack.rssMB.growth, attack.rssMB.growth < 200, 200),
    targetOf('small p99 beside the attack < 3× small p99 alone', attack.p99Ratio, attack.p99Ratio < 3, 3),
    targetOf('no errors or timeouts (small requests)', attack.smallAlone.errors + attack.smallBeside.errors, attack.smallAlone.errors + attack.smallBeside.errors === 0, 0)
  ]
}

/** The compression issue's targets: the large answer with gzip against uncompressed (bench/compression.ts). */
export function evaluateCompressionTargets (compression: CompressionResult): TargetCheck[] {
  const row = { scenario: 'compression, large', store: 'memory' }
  const targetOf = (target: string, value: number, pass: boolean, limit: number): TargetCheck => ({ ...row, target, value, limit, pass })
  const { gzip, uncompressed, ratios, answer } = compression
  const failures = gzip.errors + uncompressed.errors
  const unexpected = gzip.unexpectedStatuses + uncompressed.unexpectedStatuses
  return [
    targetOf('gzip answer correct: Content-Encoding gzip, chunked, decompresses to the uncompressed bytes', answer.correct ? 1 : 0, answer.correct, 1),
    targetOf('gzip bytes per answer ≤ 15% of uncompressed', ratios.bytes, ratios.bytes <= 0.15, 0.15),
    targetOf('gzip time per answer (p50) ≤ 1.5× uncompressed', ratios.p50, ratios.p50 <= 1.5, 1.5),
    targetOf('RSS growth during the gzip rounds < 100 MB', gzip.rssMB.growth, gzip.rssMB.growth < 100, 100),
    targetOf('no errors or timeouts', failures, failures === 0, 0),
    targetOf('no unexpected statuses', unexpected, unexpected === 0, 0)
  ]
}

/** The live events measurements' targets (bench/live.ts). */
export function evaluateLiveTargets (live: LiveResult): TargetCheck[] {
  const checks: TargetCheck[] = []
  const add = (scenario: string, store: string, target: string, value: number, pass: boolean, limit: number) => {
    checks.push({ scenario, store, target, value, limit, pass })
  }
  for (const ingest of [live.ingest.memory, live.ingest.influxdb]) {
    const ceiling = ingest.store === 'memory' ? 'appending with fdatasync' : 'raw InfluxDB writes'
    add('ingest', ingest.store, `events/s ≥ 50% of ${ceiling}`, ingest.ratio, ingest.ratio >= 0.5, 0.5)
    const failures = ingest.provider.errors + ingest.ceiling.errors
    add('ingest', ingest.store, 'no errors or timeouts', failures, failures === 0, 0)
    const unexpected = ingest.provider.unexpectedStatuses + ingest.ceiling.unexpectedStatuses
    add('ingest', ingest.store, 'no unexpected statuses', unexpected, unexpected === 0, 0)
    const notWritten = ingest.provider.refused + ingest.provider.unchanged
    add('ingest', ingest.store, 'every event written (none refused or unchanged)', notWritten, notWritten === 0, 0)
  }

  const beside = live.smallBesideIngest
  add('small beside ingest', 'memory', `small p99 beside an ingest of ${beside.ratePerSec} events/s < 2× small p99 alone`, beside.p99Ratio, beside.p99Ratio < 2, 2)
  const besideFailures = beside.smallAlone.errors + beside.smallBeside.errors + beside.ingest.errors
  add('small beside ingest', 'memory', 'no errors or timeouts', besideFailures, besideFailures === 0, 0)
  const besideUnexpected = beside.smallAlone.unexpectedStatuses + beside.smallBeside.unexpectedStatuses + beside.ingest.unexpectedStatuses + beside.ingest.refused
  add('small beside ingest', 'memory', 'no unexpected statuses or refused events', besideUnexpected, besideUnexpected === 0, 0)

  const pushChecks = (run: PushRun, limitMs: number) => {
    const scenario = `push, ${run.streams} streams${run.mqtt ? ' + MQTT' : ''}, ${run.ratePerSec} events/s`
    add(scenario, 'memory', `streams: p99 < ${limitMs} ms`, run.sse.latencyMs.p99, run.sse.latencyMs.p99 < limitMs, limitMs)
    if (run.mqttDelivery !== undefined) add(scenario, 'memory', `MQTT: p99 < ${limitMs} ms`, run.mqttDelivery.latencyMs.p99, run.mqttDelivery.latencyMs.p99 < limitMs, limitMs)
    const missing = run.sse.missing + (run.mqttDelivery?.missing ?? 0)
    add(scenario, 'memory', 'every event delivered to every subscriber', missing, missing === 0, 0)
    const failures = run.failedStreams + run.closedEarly + run.posted.errors + run.posted.unexpectedStatuses + run.posted.refused
    add(scenario, 'memory', 'every stream connected and kept, every post answered 200', failures, failures === 0, 0)
  }
  pushChecks(live.push.fast, 50)
  pushChecks(live.push.many, 250)
  return checks
}
