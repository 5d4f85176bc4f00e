import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve as resolvePath } from 'node:path'
import { freePort } from '../free-port.js'

/**
 * A real InfluxDB 1.x (Debian's influxd) on free loopback ports, with its data in a temporary
 * directory, or in a given one that outlives it (the benchmark reuses an ingested database).
 */
export interface InfluxServer {
  url: string
  /** The running influxd's process ID (undefined while stopped, or for an external server). */
  pid (): number | undefined
  /** Stops influxd, keeping its data (for outage tests). */
  stop (): Promise<void>
  /** Starts it again on the same port and data. */
  start (): Promise<void>
  /** Stops it and removes its data (a data directory the caller gave is kept). */
  destroy (): Promise<void>
}

export function influxdAvailable (): boolean {
  return spawnSync('influxd', ['version'], { stdio: 'ignore' }).status === 0
}

/**
 * In CI the InfluxDB tests are mandatory: a missing influxd fails the run instead of skipping.
 * Elsewhere they are skipped with the reason. INFLUX_URL points the tests at a running server instead.
 */
export function influxSkipReason (): string | false {
  if (process.env.INFLUX_URL !== undefined && process.env.INFLUX_URL !== '') return false
  if (influxdAvailable()) return false
  if (process.env.CI === 'true') throw new Error('influxd is not installed, and CI requires the InfluxDB tests (apt-get install influxdb)')
  return 'influxd is not installed (apt-get install influxdb), and INFLUX_URL is not set'
}

async function waitForPing (url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`influxd exited with ${child.exitCode}: ${log()}`)
    try {
      const response = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) })
      if (response.status === 204) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`influxd did not answer at ${url} within 30 s: ${log()}`)
}

/**
 * dataDir: keep meta, data and WAL there (created when missing) instead of in a temporary
 * directory. dataSettings: more lines of the config's [data] section (`key = value`).
 */
export async function startInfluxServer (dataDir?: string, dataSettings: readonly string[] = []): Promise<InfluxServer> {
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true })
  const dir = dataDir !== undefined ? resolvePath(dataDir) : mkdtempSync(join(tmpdir(), 'events-influxd-'))
  const httpPort = await freePort()
  const rpcPort = await freePort()
  const configFile = join(dir, 'influxdb.conf')
  writeFileSync(configFile, [
    'reporting-disabled = true',
    `bind-address = "127.0.0.1:${rpcPort}"`,
    '[meta]', `  dir = "${join(dir, 'meta')}"`,
    '[data]', `  dir = "${join(dir, 'data')}"`, `  wal-dir = "${join(dir, 'wal')}"`, '  query-log-enabled = false', ...dataSettings.map((line) => `  ${line}`),
    '[monitor]', '  store-enabled = false',
    '[http]', `  bind-address = "127.0.0.1:${httpPort}"`, '  log-enabled = false',
    '[subscriber]', '  enabled = false',
    '[continuous_queries]', '  enabled = false',
    ''
  ].join('\n'))
  const url = `http://127.0.0.1:${httpPort}`
  let child: ChildProcess | undefined
  let output = ''

  const start = async () => {
    output = ''
    child = spawn('influxd', ['-config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout!.on('data', (chunk) => { output = (output + chunk).slice(-4000) })
    child.stderr!.on('data', (chunk) => { output = (output + chunk).slice(-4000) })
    await waitForPing(url, child, () => output)
  }
  const stop = async () => {
    if (child === undefined || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  await start()
  return {
    url,
    pid: () => child !== undefined && child.exitCode === null ? child.pid : undefined,
    start,
    stop,
    async destroy () {
      await stop()
      if (dataDir === undefined) rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** The server the tests use: INFLUX_URL's when given, else a fresh influxd of their own. */
export async function testInfluxServer (): Promise<InfluxServer> {
  const url = process.env.INFLUX_URL
  if (url !== undefined && url !== '') {
    const unsupported = async () => { throw new Error('an external INFLUX_URL server cannot be stopped by the tests') }
    return { url, pid: () => undefined, stop: unsupported, start: unsupported, destroy: async () => {} }
  }
  return startInfluxServer()
}

/**
 * Settings for one test's data: its own measurement, so tests never see each other's points.
 * With INFLUX_BUCKET (and INFLUX_ORG, INFLUX_TOKEN) set, the Flux dialect runs against that 2.x
 * bucket (`npm run test:influx2`); otherwise InfluxQL against the test's influxd.
 */
export function influxTestEnv (server: InfluxServer, name: string, extra: Record<string, string> = {}): Record<string, string> {
  const measurement = `${name}_${process.pid}_${Date.now()}`
  const bucket = process.env.INFLUX_BUCKET
  if (bucket !== undefined && bucket !== '') {
    return {
      STORE: 'influxdb',
      INFLUX_URL: server.url,
      INFLUX_BUCKET: bucket,
      INFLUX_ORG: process.env.INFLUX_ORG ?? '',
      INFLUX_TOKEN: process.env.INFLUX_TOKEN ?? '',
      INFLUX_MEASUREMENT: measurement,
      ...extra
    }
  }
  return {
    STORE: 'influxdb',
    INFLUX_URL: server.url,
    INFLUX_DATABASE: process.env.INFLUX_DATABASE ?? 'events_tests',
    ...(process.env.INFLUX_TOKEN ? { INFLUX_TOKEN: process.env.INFLUX_TOKEN } : {}),
    INFLUX_MEASUREMENT: measurement,
    ...extra
  }
}

/** A stand-in for an InfluxDB that accepts connections and never answers; its URL. Closed when the test ends. */
export async function silentInfluxUrl (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const sockets: Socket[] = []
  const silent = createServer((socket) => { sockets.push(socket) })
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  t.teardown(() => { for (const socket of sockets) socket.destroy(); silent.close() })
  return `http://127.0.0.1:${(silent.address() as { port: number }).port}`
}
