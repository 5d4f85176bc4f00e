import { open, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { runClosedLoop, type ClosedLoopRun } from './ingest-load.js'
import { startChild, waitForExit } from './processes.js'
import { startNodeFlags } from './provider.js'

/**
 * The memory store's ingest ceiling, as a process of its own: what appending the posted NDJSON to
 * a file costs, and nothing else. `clients` loops take batches in turn (from a file of batches
 * made by the benchmark, over and over), and each batch is one write of its text to the file
 * opened for appending, then fdatasync, one batch at a time (appends to one file are serial, as
 * the provider's are): what the memory store does to make a batch durable before it answers.
 */
export interface AppendCeilingTask {
  /** NDJSON, `batchLines` lines a batch. */
  batchesFile: string
  batchLines: number
  /** Appended to. */
  targetFile: string
  clients: number
  durationSec: number
}

export const APPEND_CEILING_TASK_VARIABLE = 'APPEND_CEILING_TASK'

/** Runs the task in a child process (started with the provider's node flags) and returns its report. */
export async function runAppendCeiling (task: AppendCeilingTask): Promise<ClosedLoopRun> {
  const child = startChild(process.execPath, [...startNodeFlags(), '--import', 'tsx', join(projectRoot, 'bench', 'append-ceiling.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', [APPEND_CEILING_TASK_VARIABLE]: JSON.stringify(task) }
  })
  let stdout = ''
  child.process.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const code = await waitForExit(child)
  const last = stdout.trim().split('\n').at(-1) ?? ''
  if (code !== 0 || last === '') throw new Error(`the append ceiling failed (${code}): ${child.output()}`)
  return JSON.parse(last) as ClosedLoopRun
}

async function appendBatches (task: AppendCeilingTask): Promise<ClosedLoopRun> {
  const lines = (await readFile(task.batchesFile, 'utf8')).split('\n').filter((line) => line !== '')
  const batches: string[] = []
  for (let i = 0; i + task.batchLines <= lines.length; i += task.batchLines) batches.push(lines.slice(i, i + task.batchLines).join('\n') + '\n')
  if (batches.length === 0) throw new Error(`${task.batchesFile} holds no whole batch of ${task.batchLines} lines`)
  const handle = await open(task.targetFile, 'a')
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const result = tail.then(work)
    tail = result.catch(() => {})
    return result
  }
  try {
    return await runClosedLoop(Number.POSITIVE_INFINITY, async (index) => {
      const text = batches[index % batches.length]!
      await serial(async () => {
        const { bytesWritten } = await handle.write(text)
        if (bytesWritten < Buffer.byteLength(text)) throw new Error(`a short write (${bytesWritten} bytes)`)
        await handle.datasync()
      })
      return { status: 200, ok: true, events: task.batchLines, refused: 0, unchanged: 0 }
    }, task.clients, task.durationSec)
  } finally {
    await handle.close()
  }
}

// As a child process: the task from the environment, the report as the last line of standard output.
if (process.env[APPEND_CEILING_TASK_VARIABLE] !== undefined) {
  const report = await appendBatches(JSON.parse(process.env[APPEND_CEILING_TASK_VARIABLE]) as AppendCeilingTask)
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(0))
}
