import { Agent, request as httpRequest } from 'node:http'

/**
 * The reader of the large answers that run beside the measured small requests, as a child process
 * of its own (bench/background-load.ts starts it). It keeps `connections` large requests in
 * flight for `durationSec` and throws their bodies away. It uses node:http, whose HTTP parser is
 * native: autocannon's parser is JavaScript, and reading 400 MB/s through it took as much CPU as
 * the provider spent writing them, on the cores the measured requests need (see BENCHMARKS.md).
 */
export interface LargeReaderTask {
  url: string
  headers: Record<string, string>
  connections: number
  durationSec: number
  /** A request without its whole answer after this long is abandoned and counted as a timeout. */
  timeoutSec: number
}

/** What the reader prints as its last line of output, as JSON. */
export interface LargeReaderReport {
  durationSec: number
  /** Of the answers read to the end, in milliseconds from sending the request. */
  latenciesMs: number[]
  statuses: Record<string, number>
  /** Requests that failed, timeouts included. */
  errors: number
  timeouts: number
}

export const LARGE_READER_TASK_VARIABLE = 'LARGE_READER_TASK'

export async function readLargeAnswers (task: LargeReaderTask, onRunning: () => void = () => {}): Promise<LargeReaderReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: task.connections })
  const started = performance.now()
  const deadline = started + task.durationSec * 1000
  const report: LargeReaderReport = { durationSec: 0, latenciesMs: [], statuses: {}, errors: 0, timeouts: 0 }
  let stopping = false

  // One request; whatever happens to it, it settles (never rejects), and stops counting once the run is over.
  const once = async () => new Promise<void>((resolve) => {
    const sent = performance.now()
    let timedOut = false
    const outgoing = httpRequest(task.url, { agent, headers: task.headers }, (response) => {
      response.resume()
      response.on('end', () => {
        if (!stopping) {
          report.latenciesMs.push(performance.now() - sent)
          const status = String(response.statusCode ?? 0)
          report.statuses[status] = (report.statuses[status] ?? 0) + 1
        }
        resolve()
      })
      response.on('error', () => {})
    })
    outgoing.setTimeout(task.timeoutSec * 1000, () => {
      timedOut = true
      outgoing.destroy(new Error('timed out'))
    })
    outgoing.on('error', () => {
      if (!stopping) {
        report.errors++
        if (timedOut) report.timeouts++
      }
      resolve()
    })
    outgoing.on('close', () => resolve())
    outgoing.end()
  })

  const loop = async () => {
    // stopping is set by the deadline below, while the loop awaits.
    while (performance.now() < deadline) {
      await once()
      if (stopping) break
    }
  }
  const loops = Array.from({ length: task.connections }, loop)
  onRunning()
  // At the deadline, answers still being read are abandoned, as autocannon does: not counted.
  // Timers may fire a fraction of a millisecond early: wait until the deadline has really passed.
  while (performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, Math.max(1, deadline - performance.now())))
  stopping = true
  report.durationSec = (performance.now() - started) / 1000
  agent.destroy()
  await Promise.all(loops)
  return report
}

// As a child process: the task from the environment, "running" over IPC once the requests are out,
// the report as the last line of standard output.
if (process.env[LARGE_READER_TASK_VARIABLE] !== undefined) {
  const task = JSON.parse(process.env[LARGE_READER_TASK_VARIABLE]) as LargeReaderTask
  const report = await readLargeAnswers(task, () => process.send?.({ running: true }))
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(0))
}
