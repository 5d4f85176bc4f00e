import { runClosedLoop, type ClosedLoopCounts, type ClosedLoopTask } from './closed-loop.js'

/**
 * The reader of the large answers that run beside the measured small requests, as a child process
 * of its own (bench/background-load.ts starts it). It keeps `connections` large requests in
 * flight for `durationSec` and throws their bodies away. It uses node:http, whose HTTP parser is
 * native: autocannon's parser is JavaScript, and reading 400 MB/s through it took as much CPU as
 * the provider spent writing them, on the cores the measured requests need (see BENCHMARKS.md).
 */
export type LargeReaderTask = ClosedLoopTask

/** What the reader prints as its last line of output, as JSON. */
export type LargeReaderReport = ClosedLoopCounts

export const LARGE_READER_TASK_VARIABLE = 'LARGE_READER_TASK'

export async function readLargeAnswers (task: LargeReaderTask, onRunning: () => void = () => {}): Promise<LargeReaderReport> {
  return runClosedLoop(task, { onRunning })
}

// As a child process: the task from the environment, "running" over IPC once the requests are out,
// the report as the last line of standard output.
if (process.env[LARGE_READER_TASK_VARIABLE] !== undefined) {
  const task = JSON.parse(process.env[LARGE_READER_TASK_VARIABLE]) as LargeReaderTask
  const report = await readLargeAnswers(task, () => process.send?.({ running: true }))
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(0))
}
