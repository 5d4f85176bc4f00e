import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve as resolvePath } from 'node:path'
import { connect as connectMqtt, type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt'
import { freePort } from '../free-port.js'
import { MOSQUITTO, mosquittoConfig } from './mosquitto-config.js'

export const mosquittoAvailable = existsSync(MOSQUITTO)

/**
 * The `skip` option of the tests that need a broker: false when mosquitto is there, else the
 * reason. In CI the broker is mandatory: a missing mosquitto fails the run instead of skipping.
 */
export function mosquittoSkip (): string | false {
  if (mosquittoAvailable) return false
  const ci = process.env.CI
  if (ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0') {
    throw new Error(`${MOSQUITTO} is not installed, and CI requires the MQTT tests (apt-get install mosquitto)`)
  }
  return `${MOSQUITTO} is not installed (apt-get install mosquitto): MQTT tests skipped`
}

/** A real mosquitto on a loopback port. */
export interface Broker {
  url: string
  port: number
  /** Stops it (SIGTERM: mosquitto writes its persistent sessions and their queued messages to disk). */
  stop (): Promise<void>
  /** Starts it again on the same port and persistence directory (a broker restart). */
  start (): Promise<void>
}

/** Brokers still running: killed if the test process exits without its teardown (a crash, a timeout). */
const running = new Set<ChildProcess>()
process.once('exit', () => { for (const child of running) child.kill('SIGKILL') })

interface Teardown {
  teardown (fn: () => unknown): void
}

function accepts (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.setTimeout(500)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { socket.destroy(); resolve(false) })
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}

/**
 * Starts mosquitto for one test, stopped (and its temporary files removed) in t.teardown.
 * persistenceDir: where mosquitto.db goes (kept), else a temporary directory; port: else a free one.
 */
export async function startMosquitto (t: Teardown, options: { persistenceDir?: string, port?: number } = {}): Promise<Broker> {
  const dir = mkdtempSync(join(tmpdir(), 'events-mosquitto-'))
  let persistenceDir = join(dir, 'data')
  if (options.persistenceDir !== undefined) persistenceDir = resolvePath(options.persistenceDir)
  mkdirSync(persistenceDir, { recursive: true })
  const port = options.port ?? await freePort()
  const configFile = join(dir, 'mosquitto.conf')
  writeFileSync(configFile, mosquittoConfig(port, persistenceDir))

  let child: ChildProcess | undefined
  let output = ''

  const start = async (): Promise<void> => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) return
    output = ''
    const spawned = spawn(MOSQUITTO, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] })
    child = spawned
    running.add(spawned)
    spawned.once('exit', () => running.delete(spawned))
    spawned.stderr!.on('data', (chunk) => { output = (output + chunk).slice(-4000) })
    const spawnError = new Promise<never>((_resolve, reject) => spawned.once('error', reject))
    spawnError.catch(() => {})
    const deadline = Date.now() + 10_000
    while (true) {
      if (spawned.exitCode !== null || spawned.signalCode !== null) {
        throw new Error(`mosquitto exited with ${spawned.exitCode ?? spawned.signalCode}: ${output}`)
      }
      if (await Promise.race([accepts(port), spawnError])) {
        // Another process may have taken the port since freePort(): then mosquitto has already exited.
        await new Promise((resolve) => setTimeout(resolve, 50))
        if (spawned.exitCode === null && spawned.signalCode === null) return
        continue
      }
      if (Date.now() > deadline) throw new Error(`mosquitto did not accept connections on port ${port} within 10 s: ${output}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  const stop = async (): Promise<void> => {
    const current = child
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return
    const exited = once(current, 'exit')
    current.kill('SIGTERM')
    const timer = setTimeout(() => current.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }

  t.teardown(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  await start()
  return { url: `mqtt://127.0.0.1:${port}`, port, start, stop }
}

/** An MQTT 5 client of the tests, connected (within 5 s), ended when the test ends. */
export async function connectClient (t: Teardown, url: string, options: IClientOptions = {}): Promise<MqttClient> {
  const client = connectMqtt(url, { protocolVersion: 5, reconnectPeriod: 200, connectTimeout: 2000, ...options })
  client.on('error', () => {})
  t.teardown(() => client.endAsync(true))
  await waitUntil(() => client.connected, 5000, `client ${options.clientId ?? ''} connected to ${url}`)
  return client
}

/** The messages a client receives, in order. */
export interface Received {
  topic: string
  payload: Buffer
  packet: IPublishPacket
}

export function collect (client: MqttClient): Received[] {
  const received: Received[] = []
  client.on('message', (topic, payload, packet) => { received.push({ topic, payload, packet }) })
  return received
}

/** The distinct message_id of received event payloads. */
export function receivedIds (received: readonly Received[]): Set<string> {
  return new Set(received.map(({ payload }) => (JSON.parse(payload.toString('utf8')) as { message_id: string }).message_id))
}

/** Polls until condition() holds; fails with what was awaited after timeoutMs. */
export async function waitUntil (condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
