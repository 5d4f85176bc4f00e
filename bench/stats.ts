import type { LoadSample } from './load.js'

export interface Latency {
  p50: number
  p97_5: number
  p99: number
  mean: number
  max: number
}

/** One target's numbers over all its rounds. */
export interface Metrics {
  rounds: number
  requests: number
  durationSec: number
  reqPerSec: number
  /** Milliseconds, over every response of every round. */
  latencyMs: Latency
  /** Per round, in order: requests/s and p50, to see drift. */
  perRound: Array<{ reqPerSec: number, p50: number }>
  /** Connection errors, timeouts included (autocannon counts a timeout in both). */
  errors: number
  timeouts: number
  /** Responses whose status is not 2xx (expected ones included, as autocannon counts them). */
  non2xx: number
  /** Responses whose status is not the scenario's expected one. */
  unexpectedStatuses: number
  statuses: Record<string, number>
  bytesPerResponse: number
}

/** The value below which a fraction q of the sorted values lie (nearest rank). */
export function percentile (sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]!
}

export function latencyOf (values: Float64Array): Latency {
  const sorted = Float64Array.from(values).sort()
  let sum = 0
  for (const value of sorted) sum += value
  return {
    p50: percentile(sorted, 0.5),
    p97_5: percentile(sorted, 0.975),
    p99: percentile(sorted, 0.99),
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!
  }
}

function countOf (sample: LoadSample): number {
  return Object.values(sample.statuses).reduce((sum, count) => sum + count, 0)
}

/** Pools the rounds of one target: requests over total time, percentiles over every response. */
export function summarise (samples: readonly LoadSample[], expectedStatus: number): Metrics {
  const requests = samples.reduce((sum, sample) => sum + countOf(sample), 0)
  const durationSec = samples.reduce((sum, sample) => sum + sample.durationSec, 0)
  const all = new Float64Array(samples.reduce((sum, sample) => sum + sample.latenciesMs.length, 0))
  let offset = 0
  for (const sample of samples) {
    all.set(sample.latenciesMs, offset)
    offset += sample.latenciesMs.length
  }
  const statuses: Record<string, number> = {}
  for (const sample of samples) {
    for (const [status, count] of Object.entries(sample.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  }
  const non2xx = Object.entries(statuses).filter(([status]) => !status.startsWith('2')).reduce((sum, [, count]) => sum + count, 0)
  const unexpectedStatuses = Object.entries(statuses).filter(([status]) => Number(status) !== expectedStatus).reduce((sum, [, count]) => sum + count, 0)
  return {
    rounds: samples.length,
    requests,
    durationSec,
    reqPerSec: durationSec > 0 ? requests / durationSec : 0,
    latencyMs: latencyOf(all),
    perRound: samples.map((sample) => ({
      reqPerSec: sample.durationSec > 0 ? countOf(sample) / sample.durationSec : 0,
      p50: latencyOf(sample.latenciesMs).p50
    })),
    errors: samples.reduce((sum, sample) => sum + sample.errors, 0),
    timeouts: samples.reduce((sum, sample) => sum + sample.timeouts, 0),
    non2xx,
    unexpectedStatuses,
    statuses,
    bytesPerResponse: requests > 0 ? samples.reduce((sum, sample) => sum + sample.bytes, 0) / requests : 0
  }
}

/** Provider against a ceiling: requests/s as a share of the ceiling's, p50 as a multiple of it. */
export interface Ratio {
  reqPerSec: number
  p50: number
}

export function ratioOf (provider: Metrics, ceiling: Metrics): Ratio {
  return {
    reqPerSec: provider.reqPerSec / ceiling.reqPerSec,
    p50: provider.latencyMs.p50 / ceiling.latencyMs.p50
  }
}
