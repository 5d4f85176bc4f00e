import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, release, totalmem } from 'node:os'

export interface Machine {
  cpus: number
  cpuModel: string
  memoryGB: number
  node: string
  platform: string
  kernel: string
  influxd: string | undefined
  /**
   * The share of the CPUs' time the virtual machine's host took for others over the run (steal
   * time, /proc/stat), in percent; filled in at the end of the run (undefined: no /proc/stat).
   * On the machine of BENCHMARKS.md it was 0 at rest and 6–30% in its slow spells under load,
   * when the framework ceiling answered a third to a half as many requests.
   */
  stealPercent?: number | undefined
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

/** The CPUs' time counters of /proc/stat (all CPUs), or undefined where there is none. */
export function cpuTimes (): { total: number, steal: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    return { total: fields.reduce((sum, value) => sum + value, 0), steal: fields[7] ?? 0 }
  } catch {
    return undefined
  }
}

/** The steal time between two readings of cpuTimes, in percent of all the CPUs' time. */
export function stealPercentBetween (from: ReturnType<typeof cpuTimes>, to: ReturnType<typeof cpuTimes>): number | undefined {
  if (from === undefined || to === undefined || to.total <= from.total) return undefined
  return Math.round((to.steal - from.steal) / (to.total - from.total) * 1000) / 10
}
