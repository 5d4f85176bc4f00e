import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'

/**
 * Where the processes of the InfluxDB scenarios run. In a deployment InfluxDB has CPUs of its own
 * (another host, or a container with its own limit); on one small machine it would otherwise
 * take turns on the same cores with the provider and the load generator, and every microsecond
 * the provider spends would be taken from InfluxDB instead of added to a request's latency.
 */
export interface CpuPlacement {
  /** 'separate': influxd on CPUs of its own; 'shared': every process on every CPU. */
  mode: 'separate' | 'shared'
  /** The CPUs influxd runs on (all of them when shared). */
  storeCpus: number[]
  /** The CPUs of the provider, its ceilings and the load generator (all of them when shared). */
  otherCpus: number[]
  /** Why the CPUs are shared, when they are. */
  reason: string | undefined
}

function tasksetAvailable (): boolean {
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0
}

/**
 * influxd gets the upper half of the CPUs (at least one), everything else the rest. Shared when
 * asked for, on a single CPU, or without taskset (util-linux).
 */
export function planCpuPlacement (separate: boolean, cpuCount = availableParallelism(), canPin = tasksetAvailable): CpuPlacement {
  const all = Array.from({ length: cpuCount }, (_, cpu) => cpu)
  const shared = (reason: string): CpuPlacement => ({ mode: 'shared', storeCpus: all, otherCpus: all, reason })
  if (!separate) return shared('--shared-cores')
  if (cpuCount < 2) return shared('one CPU')
  if (!canPin()) return shared('taskset (util-linux) is not installed')
  const storeCount = Math.floor(cpuCount / 2)
  return { mode: 'separate', storeCpus: all.slice(cpuCount - storeCount), otherCpus: all.slice(0, cpuCount - storeCount), reason: undefined }
}

/** Sets the CPUs every thread of a running process may use; children started later inherit them. */
export function pinProcess (pid: number, cpus: readonly number[]): void {
  const result = spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus.join(','), String(pid)], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`taskset could not pin process ${pid} to CPUs ${cpus.join(',')}: ${result.stderr.trim()}`)
}

/**
 * Applies a placement: influxd on its CPUs, this process (the load generator, whose worker
 * threads and child processes, such as the provider started next, inherit it) on the others.
 * Returns how to undo the second part.
 */
export function applyCpuPlacement (placement: CpuPlacement, influxdPid: number | undefined): () => void {
  if (placement.mode === 'shared') return () => {}
  if (influxdPid === undefined) throw new Error('influxd is not running: it cannot be given CPUs of its own')
  pinProcess(influxdPid, placement.storeCpus)
  pinProcess(process.pid, placement.otherCpus)
  const all = [...new Set([...placement.storeCpus, ...placement.otherCpus])].sort((a, b) => a - b)
  return () => pinProcess(process.pid, all)
}

export function describeCpuPlacement (placement: CpuPlacement): string {
  if (placement.mode === 'shared') return `every process on every CPU (${placement.reason})`
  return `influxd on CPU ${placement.storeCpus.join(',')}, the provider, its ceilings and the load generator on CPU ${placement.otherCpus.join(',')} (taskset)`
}
