import { spawnSync } from 'node:child_process'
import { availableParallelism, cpus, release, totalmem } from 'node:os'

export interface Machine {
  cpus: number
  cpuModel: string
  memoryGB: number
  node: string
  platform: string
  kernel: string
  influxd: string | undefined
}

export function describeMachine (): Machine {
  const influxd = spawnSync('influxd', ['version'], { encoding: 'utf8' })
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGB: Math.round(totalmem() / 1024 ** 3 * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    kernel: release(),
    influxd: influxd.status === 0 ? influxd.stdout.trim() : undefined
  }
}
