import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { LARGE_READER_TASK_VARIABLE, type LargeReaderReport, type LargeReaderTask } from './large-reader.js'
import { REQUEST_TIMEOUT_SEC, type LoadOptions, type LoadRequest } from './load.js'
import { startChild, waitForExit } from './processes.js'
import { percentile } from './stats.js'

/** A load that runs beside a measurement. */
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

/** A background load started: it ends by itself after its duration. */
export interface RunningBackground {
  finished: Promise<BackgroundRun>
}

/**
 * Starts the request looping on options.connections connections for options.durationSec, in a
 * process of its own (bench/large-reader.ts), and resolves once its requests are out. Its own
 * process, so that reading large answers does not hold up the event loop that times the
 * measured requests, and node:http, so that reading them costs little CPU.
 */
export async function startBackground (request: LoadRequest, options: LoadOptions, expectedStatus: number): Promise<RunningBackground> {
  const task: LargeReaderTask = {
    url: request.url,
    headers: request.headers ?? {},
    connections: options.connections,
    durationSec: options.durationSec,
    timeoutSec: REQUEST_TIMEOUT_SEC
  }
  const child = startChild(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'large-reader.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', [LARGE_READER_TASK_VARIABLE]: JSON.stringify(task) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  let stdout = ''
  child.process.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const exited = waitForExit(child)
  await new Promise<void>((resolve, reject) => {
    child.process.once('message', () => resolve())
    exited.then((code) => reject(new Error(`the large-answer reader exited (${code}) before it started: ${child.output()}`)), reject)
  })
  const finished = exited.then((code) => {
    const last = stdout.trim().split('\n').at(-1) ?? ''
    if (code !== 0 || last === '') throw new Error(`the large-answer reader failed (${code}): ${child.output()}`)
    return summariseBackground(JSON.parse(last) as LargeReaderReport, expectedStatus)
  })
  // Awaited by the caller; this keeps an early failure from being reported as unhandled meanwhile.
  finished.catch(() => {})
  return { finished }
}

export function summariseBackground (report: LargeReaderReport, expectedStatus: number): BackgroundRun {
  const requests = Object.values(report.statuses).reduce((sum, count) => sum + count, 0)
  const sorted = Float64Array.from(report.latenciesMs).sort()
  return {
    requests,
    durationSec: report.durationSec,
    reqPerSec: report.durationSec > 0 ? requests / report.durationSec : 0,
    latencyMs: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]! },
    errors: report.errors,
    timeouts: report.timeouts,
    unexpectedStatuses: Object.entries(report.statuses).filter(([status]) => Number(status) !== expectedStatus).reduce((sum, [, count]) => sum + count, 0),
    statuses: report.statuses
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
