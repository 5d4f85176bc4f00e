import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { projectRoot } from '../src/project-root.js'
import type { Dataset } from './dataset.js'
import { influxEnv } from './influx-store.js'
import { LOOPBACK, freePort } from './ports.js'
import { processTree, startChild, stopChild, type Child } from './processes.js'
import { treeRssBytes } from './rss.js'

export interface ProviderOptions {
  /** For messages: "memory", "influxdb", "memory, WORKERS=auto". */
  name: string
  dataset: Dataset
  token: string
  store: 'memory' | 'influxdb'
  /** Required with store influxdb. */
  influxUrl?: string
  /** Set WORKERS (node:cluster) to this; unset runs the provider as one process. */
  workers?: string
  /** Extra node options (--cpu-prof ...). */
  nodeArgs?: string[]
  /** EVENTS_FILE other than the data set's (the load-growth measurement loads parts of it). */
  eventsFile?: string
  /** LOG_LEVEL other than warn. */
  logLevel?: string
  /** Called as soon as the process is started (to sample its memory while it loads). */
  onSpawn?: (pid: number) => void
  /** More variables (INGEST_TOKENS, MQTT_URL, MAX_CONNECTIONS ...), set last: they win. */
  env?: Record<string, string>
}

/** The provider as `npm start` runs it (built, with the same node flags), configured by its environment. */
export interface Provider {
  name: string
  url: string
  pid: number
  child: Child
  /** Worker processes below the provider's process (0 when it serves alone). */
  workerCount (): number
  stop (): Promise<void>
}

const START_TIMEOUT_MS = 600_000

/** The node flags `npm start` passes (package.json `config.nodeFlags`). */
export function startNodeFlags (): string[] {
  const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { config?: { nodeFlags?: string } }
  return (manifest.config?.nodeFlags ?? '').split(/\s+/).filter((flag) => flag !== '')
}

/** `npm run build`, once per benchmark run, so the providers run what `npm start` runs. */
export function buildProvider (): void {
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: projectRoot, stdio: 'inherit' })
  if (result.status !== 0) throw new Error('npm run build failed')
}

export async function startProvider (options: ProviderOptions): Promise<Provider> {
  const { dataset } = options
  const port = await freePort()
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: String(port),
    HOST: LOOPBACK,
    API_TOKENS: options.token,
    EVENTS_FILE: options.eventsFile ?? dataset.eventsFile,
    ENTITIES_FILE: dataset.entitiesFile,
    SPECIFICATIONS_FILE: dataset.specificationsFile,
    LOG_LEVEL: options.logLevel ?? 'warn'
  }
  if (options.store === 'influxdb') {
    if (options.influxUrl === undefined) throw new Error('an InfluxDB provider needs influxUrl')
    Object.assign(env, influxEnv(options.influxUrl))
  }
  if (options.workers !== undefined) env.WORKERS = options.workers
  if (options.env !== undefined) Object.assign(env, options.env)
  const child = startChild(process.execPath, [...startNodeFlags(), ...(options.nodeArgs ?? []), join(projectRoot, 'dist', 'src', 'server.js')], { cwd: projectRoot, env })
  options.onSpawn?.(child.pid)
  const url = `http://${LOOPBACK}:${port}`
  const provider: Provider = {
    name: options.name,
    url,
    pid: child.pid,
    child,
    workerCount: () => processTree(child.pid).length - 1,
    stop: () => stopChild(child)
  }
  try {
    await waitUntilReady(provider)
    await waitUntilSettled(provider)
  } catch (error) {
    await provider.stop()
    throw error
  }
  return provider
}

async function waitUntilReady (provider: Provider): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (provider.child.exited()) throw new Error(`the ${provider.name} provider exited during start-up: ${provider.child.output()}`)
    try {
      const response = await fetch(`${provider.url}/health/ready`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.status === 200) return
    } catch {}
    await sleep(200)
  }
  throw new Error(`the ${provider.name} provider was not ready within ${START_TIMEOUT_MS / 1000} s: ${provider.child.output()}`)
}

/**
 * Cluster workers load the data each on their own, and the first one to listen makes the port
 * answer: wait until the whole process tree's memory stops growing (under 1 MB in half a second).
 */
async function waitUntilSettled (provider: Provider): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  let previous = treeRssBytes(provider.pid)
  while (Date.now() < deadline) {
    await sleep(500)
    const current = treeRssBytes(provider.pid)
    if (Math.abs(current - previous) < 1024 * 1024) return
    previous = current
  }
}
