import { availableParallelism } from 'node:os'
import { SLICE_SEC } from './measure-scenario.js'
import { alternate, warmUpFreshProvider } from './alternate.js'
import type { Dataset } from './dataset.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import { startProvider, type Provider } from './provider.js'
import { treeRssBytes } from './rss.js'
import { providerRequest, type Scenario } from './scenarios.js'
import { summarise, type Metrics } from './stats.js'

/** The small scenario on the memory store: the provider as one process against WORKERS=auto. */
export interface WorkersComparison {
  /** False when the provider ignored WORKERS (no worker processes appeared) or could not start with it. */
  supported: boolean
  note: string
  cpus: number
  /** Worker processes seen below the WORKERS=auto provider. */
  workerProcesses: number
  oneProcess?: Metrics
  allCores?: Metrics
  /** allCores req/s divided by oneProcess req/s. */
  reqPerSecRatio?: number
  rssMB?: { oneProcess: number, allCores: number }
}

export async function compareWorkers (single: Provider, dataset: Dataset, token: string, small: Scenario, profile: Profile): Promise<WorkersComparison> {
  const cpus = availableParallelism()
  let auto: Provider
  try {
    auto = await startProvider({ name: 'memory, WORKERS=auto', dataset, token, store: 'memory', workers: 'auto' })
  } catch (error) {
    const note = `the provider did not start with WORKERS=auto: ${(error as Error).message.slice(0, 500)}`
    log(`workers: ${note}`)
    return { supported: false, note, cpus, workerProcesses: 0 }
  }
  try {
    const workerProcesses = auto.workerCount()
    if (workerProcesses === 0) {
      const note = 'WORKERS=auto started no worker processes: this provider does not implement WORKERS yet (it served as one process)'
      log(`workers: ${note}`)
      return { supported: false, note, cpus, workerProcesses }
    }
    log(`workers: WORKERS=auto runs ${workerProcesses} workers on ${cpus} cores`)
    await warmUpFreshProvider(providerRequest(small, auto.url, token), profile, 'workers')
    const samples = await alternate([
      { label: 'one process', request: providerRequest(small, single.url, token) },
      { label: 'WORKERS=auto', request: providerRequest(small, auto.url, token) }
    ], profile, 'small/memory workers', undefined, SLICE_SEC)
    const oneProcess = summarise(samples[0]!, 200)
    const allCores = summarise(samples[1]!, 200)
    const MB = 1024 * 1024
    return {
      supported: true,
      note: `WORKERS=auto: ${workerProcesses} worker processes, each with its own copy of the memory store`,
      cpus,
      workerProcesses,
      oneProcess,
      allCores,
      reqPerSecRatio: allCores.reqPerSec / oneProcess.reqPerSec,
      rssMB: { oneProcess: treeRssBytes(single.pid) / MB, allCores: treeRssBytes(auto.pid) / MB }
    }
  } finally {
    await auto.stop()
  }
}
