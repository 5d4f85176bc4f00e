import autocannon from 'autocannon'
import { autocannonOptions, type LoadOptions, type LoadRequest } from './load.js'

/** A load that runs beside a measurement, as autocannon summarises it (whole milliseconds). */
export interface BackgroundRun {
  requests: number
  durationSec: number
  reqPerSec: number
  latencyMs: { p50: number, p99: number, max: number }
  /** Connection errors, timeouts included. */
  errors: number
  timeouts: number
  unexpectedStatuses: number
  statuses: Record<string, number>
}

/**
 * Runs in a worker thread of its own (autocannon's workers mode), so that reading its large
 * answers does not hold up the event loop that times the measured requests. It runs for its whole
 * duration: autocannon cannot stop a worker early.
 */
export async function runInBackground (request: LoadRequest, options: LoadOptions, expectedStatus: number): Promise<BackgroundRun> {
  const result = await autocannon({ ...autocannonOptions(request, options), workers: 1 })
  const statuses: Record<string, number> = {}
  for (const [status, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[status] = stats.count ?? 0
  const requests = Object.values(statuses).reduce((sum, count) => sum + count, 0)
  return {
    requests,
    durationSec: result.duration,
    reqPerSec: result.duration > 0 ? requests / result.duration : 0,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
    errors: result.errors,
    timeouts: result.timeouts,
    unexpectedStatuses: Object.entries(statuses).filter(([status]) => Number(status) !== expectedStatus).reduce((sum, [, count]) => sum + count, 0),
    statuses
  }
}

/** Several rounds of it as one. */
export function poolBackground (runs: readonly BackgroundRun[]): BackgroundRun & { rounds: number } {
  const statuses: Record<string, number> = {}
  for (const run of runs) {
    for (const [status, count] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  }
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  const durationSec = runs.reduce((sum, run) => sum + run.durationSec, 0)
  const p50s = runs.map((run) => run.latencyMs.p50).sort((a, b) => a - b)
  return {
    rounds: runs.length,
    requests,
    durationSec,
    reqPerSec: durationSec > 0 ? requests / durationSec : 0,
    // The rounds' own percentiles cannot be pooled: the median round's p50, the worst round's p99.
    latencyMs: { p50: p50s[Math.floor(p50s.length / 2)] ?? NaN, p99: Math.max(...runs.map((run) => run.latencyMs.p99)), max: Math.max(...runs.map((run) => run.latencyMs.max)) },
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    timeouts: runs.reduce((sum, run) => sum + run.timeouts, 0),
    unexpectedStatuses: runs.reduce((sum, run) => sum + run.unexpectedStatuses, 0),
    statuses
  }
}
