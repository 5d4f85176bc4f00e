import { existsSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { startInfluxServer, type InfluxServer } from '../test/influx/influx-server.js'
import type { Dataset } from './dataset.js'
import { log } from './log.js'
import { startChild, stopChild, waitForExit } from './processes.js'
import { treeCpuSeconds } from './rss.js'

export const INFLUX_DATABASE = 'bench'
export const INFLUX_MEASUREMENT = 'event'

/** influxd (Debian's 1.x, as the tests run it) holding the data set. */
export interface InfluxStore {
  server: InfluxServer
  url: string
  database: string
  measurement: string
  /** Points in the measurement, counted after start. */
  points: number
  reused: boolean
  ingestSeconds: number | undefined
  /** How long influxd took to go quiet after it was opened (settle), in seconds. */
  settleSeconds: number
}

interface IngestManifest {
  database: string
  measurement: string
  /** Ingested with the message_id index (src/store/influx/message-id-index.ts); older ingests lack it. */
  messageIdIndex?: boolean
  events: number
  ingestSeconds: number
  ingestedAt: string
}

const MANIFEST = 'influx-manifest.json'

/**
 * influxd's own defaults write an ingest's cache out once it has had no write for 10 minutes, and
 * compact its files fully after 4 hours: a fresh ingest was compacted in the middle of the
 * memory-store scenarios, at 55-63% of a core (a small round of the provider's at 2,581 requests
 * a second against the ceiling's 15,150, in the run of 2026-12-01). Here it is done within
 * seconds of the ingest's end, and the run waits for it (settle).
 */
const DATA_SETTINGS = ['cache-snapshot-write-cold-duration = "2s"', 'compact-full-write-cold-duration = "10s"']

/** The environment the provider and the ingest use for this database. */
export function influxEnv (url: string): Record<string, string> {
  return {
    STORE: 'influxdb',
    INFLUX_URL: url,
    INFLUX_DATABASE,
    INFLUX_MEASUREMENT,
    INFLUX_TIMEOUT_MS: '60000'
  }
}

/**
 * Starts influxd on the data set's own data folder. An ingest finished by an earlier run (its
 * manifest matches, and the point count agrees) is reused; anything else is wiped and ingested
 * with `src/cli/ingest.ts`, which takes minutes for a million events.
 */
export async function openInfluxStore (dataset: Dataset): Promise<InfluxStore> {
  const dataDir = join(dataset.dir, 'influxdb')
  const manifestFile = join(dataset.dir, MANIFEST)
  const manifest = await readManifest(manifestFile)
  const reusable = manifest !== undefined && manifest.events === dataset.events &&
    manifest.database === INFLUX_DATABASE && manifest.measurement === INFLUX_MEASUREMENT && manifest.messageIdIndex === true && existsSync(dataDir)

  if (reusable) {
    log('influxd: starting on the data ingested by an earlier run')
    const server = await startInfluxServer(dataDir, DATA_SETTINGS)
    try {
      const points = await countPoints(server.url)
      if (points === dataset.events) {
        const settleSeconds = await settle(server)
        return { server, url: server.url, database: INFLUX_DATABASE, measurement: INFLUX_MEASUREMENT, points, reused: true, ingestSeconds: undefined, settleSeconds }
      }
      log(`influxd: the earlier ingest holds ${points} points, not ${dataset.events}; ingesting again`)
    } catch (error) {
      log(`influxd: the earlier ingest cannot be read (${(error as Error).message}); ingesting again`)
    }
    await server.destroy()
  }

  await rm(manifestFile, { force: true })
  await rm(dataDir, { recursive: true, force: true })
  const server = await startInfluxServer(dataDir, DATA_SETTINGS)
  try {
    log(`influxd: ingesting ${dataset.events} events (src/cli/ingest.ts)`)
    const started = performance.now()
    await ingest(dataset.eventsFile, server.url)
    const ingestSeconds = (performance.now() - started) / 1000
    const points = await countPoints(server.url)
    if (points !== dataset.events) throw new Error(`InfluxDB holds ${points} points after the ingest of ${dataset.events} events`)
    const written: IngestManifest = { database: INFLUX_DATABASE, measurement: INFLUX_MEASUREMENT, messageIdIndex: true, events: points, ingestSeconds, ingestedAt: new Date().toISOString() }
    await writeFile(manifestFile, JSON.stringify(written, null, 2) + '\n')
    log(`influxd: ${points} events ingested in ${ingestSeconds.toFixed(1)} s`)
    const settleSeconds = await settle(server)
    return { server, url: server.url, database: INFLUX_DATABASE, measurement: INFLUX_MEASUREMENT, points, reused: false, ingestSeconds, settleSeconds }
  } catch (error) {
    await server.destroy()
    throw error
  }
}

/** influxd is quiet once it used less than this share of a core in each of SETTLE_WINDOWS windows of SETTLE_WINDOW_MS in a row. */
const SETTLE_CPU_SHARE = 0.05
const SETTLE_WINDOW_MS = 2000
const SETTLE_WINDOWS = 10
/** It is waited for this long at most (it is then said, and the run goes on). */
const SETTLE_MAX_MS = 10 * 60_000

/**
 * Waits until influxd has gone quiet (DATA_SETTINGS). After an ingest of a million events it
 * compacts its shards for minutes, and the memory-store scenarios come next, on the same CPUs: in
 * the runs of 2026-12-01 it took 55-63% of a core through the small and medium scenarios. The
 * memory-store provider does not use it, so what it did then was only noise on those rounds.
 */
async function settle (server: InfluxServer): Promise<number> {
  const pid = server.pid()
  if (pid === undefined) return 0
  const started = performance.now()
  let cpu = treeCpuSeconds(pid)
  let readAt = started
  let quiet = 0
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_WINDOW_MS))
    // A dead influxd uses no CPU: not quiet, gone, and the scenarios after would fail on it.
    if (server.pid() === undefined) throw new Error('influxd exited while the run waited for it to go quiet')
    const now = treeCpuSeconds(pid)
    const at = performance.now()
    // Over the time that passed, not the window asked for: a timer fires late on a busy machine.
    const share = (now - cpu) / ((at - readAt) / 1000)
    cpu = now
    readAt = at
    const waited = at - started
    quiet = share < SETTLE_CPU_SHARE ? quiet + 1 : 0
    if (quiet === SETTLE_WINDOWS) {
      log(`influxd: quiet for ${(SETTLE_WINDOWS * SETTLE_WINDOW_MS / 1000).toFixed(0)} s after ${(waited / 1000).toFixed(0)} s (its compactions done)`)
      return waited / 1000
    }
    if (waited > SETTLE_MAX_MS) {
      log(`influxd: still busy after ${(waited / 1000).toFixed(0)} s (${Math.round(share * 100)}% of a core); going on`)
      return waited / 1000
    }
  }
}

async function readManifest (file: string): Promise<IngestManifest | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as IngestManifest
  } catch {
    return undefined
  }
}

async function ingest (eventsFile: string, url: string): Promise<void> {
  const child = startChild(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'cli', 'ingest.ts'), eventsFile], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...influxEnv(url) }
  })
  const started = Date.now()
  const ticker = setInterval(() => log(`influxd: still ingesting (${Math.round((Date.now() - started) / 1000)} s)`), 30_000)
  try {
    const code = await waitForExit(child)
    if (code !== 0) throw new Error(`the ingest failed (${code}): ${child.output()}`)
  } finally {
    clearInterval(ticker)
    await stopChild(child)
  }
}

/** SELECT count over the whole measurement. */
export async function countPoints (url: string): Promise<number> {
  const body = new URLSearchParams({ db: INFLUX_DATABASE, q: `SELECT count("message_id") FROM "${INFLUX_MEASUREMENT}"` })
  const response = await fetch(`${url}/query`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    signal: AbortSignal.timeout(120_000)
  })
  const answer = await response.json() as { results?: Array<{ error?: string, series?: Array<{ values: unknown[][] }> }> }
  const result = answer.results?.[0]
  if (response.status !== 200 || result?.error !== undefined) throw new Error(`count query answered ${response.status}: ${result?.error ?? ''}`)
  return Number(result?.series?.[0]?.values[0]?.[1] ?? 0)
}
