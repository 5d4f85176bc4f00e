import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { MOSQUITTO, mosquittoConfig } from '../test/mqtt/mosquitto-config.js'
import { LOOPBACK, freePort } from './ports.js'
import { startChild, stopChild, type Child } from './processes.js'

export { MOSQUITTO }

export function mosquittoAvailable (): boolean {
  return existsSync(MOSQUITTO)
}

export interface Mosquitto {
  url: string
  pid: number
  stop (): Promise<void>
}

async function accepts (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: LOOPBACK })
    socket.setTimeout(500)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { socket.destroy(); resolve(false) })
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}

/**
 * mosquitto on a free loopback port, without persistence (the benchmark's clients use clean
 * sessions), one of the benchmark's children: stopped however the run ends.
 */
export async function startMosquitto (scratch: string): Promise<Mosquitto> {
  const port = await freePort()
  const configFile = join(scratch, 'mosquitto.conf')
  await writeFile(configFile, mosquittoConfig(port))
  const child: Child = startChild(MOSQUITTO, ['-c', configFile])
  const deadline = Date.now() + 10_000
  while (!(await accepts(port))) {
    if (child.exited()) throw new Error(`mosquitto exited: ${child.output()}`)
    if (Date.now() > deadline) {
      await stopChild(child)
      throw new Error(`mosquitto did not accept connections on port ${port} within 10 s: ${child.output()}`)
    }
    await sleep(50)
  }
  return { url: `mqtt://${LOOPBACK}:${port}`, pid: child.pid, stop: () => stopChild(child) }
}
