import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { influxdAvailable } from '../test/influx/influx-server.js'
import { startFrameworkCeiling, type FrameworkCeiling } from './ceiling.js'
import { warmUpFreshProvider } from './alternate.js'
import { measureCompression, type CompressionResult } from './compression.js'
import { applyCpuPlacement, describeCpuPlacement, planCpuPlacement } from './cpu-placement.js'
import { ensureDataset } from './dataset.js'
import { openInfluxStore, type InfluxStore } from './influx-store.js'
import { measureLive, type LiveResult } from './live.js'
import { measureLoadGrowth, type LoadGrowthPoint } from './load-growth.js'
import { log } from './log.js'
import { cpuTimes, describeMachine, stealPercentBetween } from './machine.js'
import { measureScenario, type ScenarioResult } from './measure-scenario.js'
import { measurePipeliningAttack, type PipeliningAttackResult } from './pipelining-attack.js'
import { USAGE, UsageError, parseBenchOptions, type BenchOptions } from './options.js'
import { killChildrenNow, stopAllChildren } from './processes.js'
import { profileSmall, type SmallProfile } from './profile-small.js'
import { buildProvider, startProvider, type Provider } from './provider.js'
import { buildReport, renderMarkdown, writeReport } from './report.js'
import { providerRevision } from './revision.js'
import { buildScenarios, providerRequest, yearPath, type Scenario } from './scenarios.js'
import { evaluateAttackTargets, evaluateCompressionTargets, evaluateLiveTargets, evaluateLoadTargets, evaluateTargets } from './targets.js'
import { compareWorkers, type WorkersComparison } from './workers.js'

/**
 * `npm run bench [-- --quick] [-- --only live|compression]`: the provider under load on both
 * stores, beside its ceilings (a bare Fastify server serving the same bytes, and the raw InfluxDB
 * query), measured in turns, with the large answer uncompressed against gzip on the memory store;
 * then its live events (ingest throughput, push latency), each against its own ceiling or target.
 * Exits 0 when the run completed, whatever the targets say; non-zero when it could not run.
 */

/** Everything started, to be stopped however the run ends. */
const running: { influx?: InfluxStore, scratch?: string } = {}
let cleaning: Promise<void> | undefined

async function cleanUp (): Promise<void> {
  cleaning ??= (async () => {
    await stopAllChildren()
    await running.influx?.server.stop().catch(() => {})
    if (running.scratch !== undefined) await rm(running.scratch, { recursive: true, force: true })
  })()
  return cleaning
}

process.on('exit', killChildrenNow)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping every process the benchmark started`)
    cleanUp().finally(() => process.exit(130))
  })
}

async function run (options: BenchOptions): Promise<void> {
  const { profile } = options
  // --only compression measures the memory store alone: no InfluxDB.
  const needsInflux = options.only !== 'compression'
  if (needsInflux && !influxdAvailable()) throw new Error('influxd is not installed (apt-get install influxdb): the benchmark starts its own InfluxDB')
  const started = performance.now()
  running.scratch = await mkdtemp(join(tmpdir(), 'events-bench-'))
  await mkdir(options.resultsDir, { recursive: true })
  const machine = describeMachine()
  const cpuAtStart = cpuTimes()
  const revision = providerRevision()
  log(`${profile.name} run: ${machine.cpus} CPUs, ${machine.memoryGB} GB, Node.js ${machine.node}`)

  log('building the provider')
  buildProvider()
  const dataset = await ensureDataset(options.dataRoot, profile)
  let influx: InfluxStore | undefined
  if (needsInflux) {
    influx = await openInfluxStore(dataset)
    running.influx = influx
  }
  const influxStore = (): InfluxStore => {
    if (influx === undefined) throw new Error('InfluxDB was not started')
    return influx
  }
  const token = randomBytes(24).toString('base64url')
  const scenarios = buildScenarios(dataset)
  const small = scenarios.find((scenario) => scenario.name === 'small')!
  const large = scenarios.find((scenario) => scenario.name === 'large')!
  const placement = planCpuPlacement(options.separateStoreCpus)
  const results: ScenarioResult[] = []
  let pipelining: PipeliningAttackResult | undefined
  let workers: WorkersComparison | undefined
  let loadGrowth: LoadGrowthPoint[] | undefined
  let cpuProfile: SmallProfile | undefined
  let compression: CompressionResult | undefined
  let live: LiveResult | undefined

  if (options.only === undefined) {
    const ceiling: FrameworkCeiling = await startFrameworkCeiling(running.scratch)
    const measureAll = async (provider: Provider, store: 'memory' | 'influxdb', wanted: readonly Scenario[]) => {
      for (const scenario of wanted) {
        results.push(await measureScenario(scenario, {
          profile,
          provider,
          store,
          token,
          ceiling,
          small,
          ...(store === 'influxdb' ? { influx: { url: influxStore().url, database: influxStore().database, measurement: influxStore().measurement } } : {})
        }))
      }
    }

    log('starting the memory-store provider')
    const memory = await startProvider({ name: 'memory', dataset, token, store: 'memory' })
    await warmUpFreshProvider(providerRequest(small, memory.url, token), profile, 'memory')
    await measureAll(memory, 'memory', scenarios.filter((scenario) => scenario.stores.includes('memory')))
    log('compression: the large answer uncompressed and with Accept-Encoding: gzip, in turns')
    compression = await measureCompression(memory, providerRequest(large, memory.url, token), profile)
    log('pipelined attack: the memory-store provider, small requests beside connections that pipeline and never read')
    pipelining = await measurePipeliningAttack(memory, providerRequest(small, memory.url, token), yearPath(dataset), `Bearer ${token}`, profile)
    workers = await compareWorkers(memory, dataset, token, small, profile)
    await memory.stop()
    log('load: the memory store loading parts of the data set, against a bare JSON.parse of the same lines')
    loadGrowth = await measureLoadGrowth(dataset, token, running.scratch)

    log(`InfluxDB scenarios: ${describeCpuPlacement(placement)}`)
    const unpin = applyCpuPlacement(placement, influxStore().server.pid())
    try {
      log('starting the InfluxDB provider')
      const influxProvider = await startProvider({ name: 'influxdb', dataset, token, store: 'influxdb', influxUrl: influxStore().url })
      await warmUpFreshProvider(providerRequest(small, influxProvider.url, token), profile, 'influxdb')
      await measureAll(influxProvider, 'influxdb', scenarios.filter((scenario) => scenario.stores.includes('influxdb')))
      await influxProvider.stop()
    } finally {
      unpin()
    }
    await ceiling.stop()
  }

  if (options.only === 'compression') {
    log('starting the memory-store provider')
    const memory = await startProvider({ name: 'memory', dataset, token, store: 'memory' })
    await warmUpFreshProvider(providerRequest(small, memory.url, token), profile, 'memory')
    try {
      compression = await measureCompression(memory, providerRequest(large, memory.url, token), profile)
    } finally {
      await memory.stop()
    }
  }

  if (options.only === undefined || options.only === 'live') {
    log('live events: ingest throughput, small requests beside an ingest, push latency')
    live = await measureLive({ profile, dataset, token, scratch: running.scratch, small, influx: influxStore(), placement })
  }

  if (options.cpuProfile) {
    // An extra: its failure is reported, and the measurements are kept.
    try {
      cpuProfile = await profileSmall(dataset, token, small, profile, running.scratch, options.resultsDir)
    } catch (error) {
      log(`cpu profile: not taken: ${(error as Error).message}`)
    }
  }

  const targets = [
    ...evaluateTargets(results),
    ...(pipelining === undefined ? [] : evaluateAttackTargets(pipelining)),
    ...(loadGrowth === undefined ? [] : evaluateLoadTargets(loadGrowth)),
    ...(compression === undefined ? [] : evaluateCompressionTargets(compression)),
    ...(live === undefined ? [] : evaluateLiveTargets(live))
  ]
  machine.stealPercent = stealPercentBetween(cpuAtStart, cpuTimes())
  const report = buildReport({ profile, only: options.only, placement, machine, revision, dataset, influx, scenarios: results, pipelining, loadGrowth, workers, compression, live, targets, cpuProfile, durationSec: (performance.now() - started) / 1000 })
  const written = await writeReport(options.resultsDir, report)
  process.stdout.write('\n' + renderMarkdown(report))
  log(`written: ${relative(projectRoot, written.json)}, ${relative(projectRoot, written.markdown)}; ${report.targetsMissed} of ${targets.length} targets missed`)
}

async function main (): Promise<number> {
  let options: BenchOptions
  try {
    options = parseBenchOptions(process.argv.slice(2), process.env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    console.error(error.message === '' ? USAGE : `bench: ${error.message}\n\n${USAGE}`)
    return error.message === '' ? 0 : 2
  }
  try {
    await run(options)
    return 0
  } catch (error) {
    console.error(`bench: the run could not complete: ${(error as Error).stack ?? String(error)}`)
    return 1
  } finally {
    await cleanUp()
  }
}

// Exits explicitly: a load generator's leftover timer must not keep a finished run alive.
process.exit(await main())
