import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { ingestHeaders, ingestOutcome, post, postAgent, runOpenLoop, type OpenLoopRun } from './ingest-load.js'
import { startChild, waitForExit } from './processes.js'

/**
 * An ingest at a fixed rate beside a measurement, in a process of its own (as the large answers
 * are, bench/large-reader.ts): POST /ingest/events of `perPost` events every `intervalMs`, the
 * events read from a file the benchmark made (NDJSON, `perPost` lines a post), until they run out.
 */
export interface PosterTask {
  url: string
  ingestToken: string
  eventsFile: string
  perPost: number
  intervalMs: number
}

export const POSTER_TASK_VARIABLE = 'INGEST_POSTER_TASK'

/** A background ingest started: it ends by itself once its events are posted and answered. */
export interface RunningPoster {
  finished: Promise<OpenLoopRun>
}

/** Starts the poster and resolves once it has read its events and sends the first post. */
export async function startPoster (task: PosterTask): Promise<RunningPoster> {
  const child = startChild(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'ingest-poster.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', [POSTER_TASK_VARIABLE]: JSON.stringify(task) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  let stdout = ''
  child.process.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const exited = waitForExit(child)
  await new Promise<void>((resolve, reject) => {
    child.process.once('message', () => resolve())
    exited.then((code) => reject(new Error(`the ingest poster exited (${code}) before it started: ${child.output()}`)), reject)
  })
  const finished = exited.then((code) => {
    const last = stdout.trim().split('\n').at(-1) ?? ''
    if (code !== 0 || last === '') throw new Error(`the ingest poster failed (${code}): ${child.output()}`)
    return JSON.parse(last, (_key, value) => value === null ? NaN : value) as OpenLoopRun
  })
  finished.catch(() => {})
  return { finished }
}

async function postEvents (task: PosterTask, onRunning: () => void): Promise<OpenLoopRun> {
  const lines = (await readFile(task.eventsFile, 'utf8')).split('\n').filter((line) => line !== '')
  const bodies: Buffer[] = []
  for (let i = 0; i + task.perPost <= lines.length; i += task.perPost) bodies.push(Buffer.from(lines.slice(i, i + task.perPost).join('\n') + '\n'))
  const agent = postAgent(16)
  const url = `${task.url}/ingest/events`
  const headers = ingestHeaders(task.ingestToken)
  onRunning()
  try {
    return await runOpenLoop(bodies.length, async (index, onResponse) => ingestOutcome(await post(agent, url, headers, bodies[index]!, onResponse)), task.intervalMs)
  } finally {
    agent.destroy()
  }
}

// As a child process: the task from the environment, "running" over IPC, the report as the last line of standard output.
if (process.env[POSTER_TASK_VARIABLE] !== undefined) {
  const report = await postEvents(JSON.parse(process.env[POSTER_TASK_VARIABLE]) as PosterTask, () => process.send?.({ running: true }))
  // sentAt and answeredAt are of no use to the parent (another clock): left out.
  const { sentAt: _sent, answeredAt: _answered, ...rest } = report
  process.stdout.write(JSON.stringify({ ...rest, sentAt: [], answeredAt: [] }) + '\n', () => process.exit(0))
}
