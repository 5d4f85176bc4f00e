import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { influxdAvailable } from './influx/influx-server.js'

/**
 * The benchmark always starts its own influxd (INFLUX_URL does not replace it). In CI it is
 * mandatory, as the InfluxDB tests are; elsewhere it is skipped without influxd.
 */
function skipReason (): string | false {
  if (influxdAvailable()) return false
  if (process.env.CI === 'true') throw new Error('influxd is not installed, and CI requires the benchmark test (apt-get install influxdb)')
  return 'influxd is not installed (apt-get install influxdb): the benchmark needs its own InfluxDB'
}

const skip = skipReason()

const EXPECTED = [
  'small/memory', 'medium/memory', 'large/memory', 'lookup/memory', 'specifications/memory', 'rejected/memory', 'unauthorised/memory',
  'small/influxdb', 'medium/influxdb', 'large/influxdb', 'lookup/influxdb'
]

interface Metrics {
  requests: number
  reqPerSec: number
  latencyMs: Record<string, number>
  errors: number
  timeouts: number
  non2xx: number
  unexpectedStatuses: number
}

interface Row {
  scenario: string
  store: string
  expectedStatus: number
  provider: Metrics
  frameworkCeiling: Metrics
  storeCeiling?: Metrics
  ratios: { framework: Record<string, number>, store?: Record<string, number> }
  rss: Record<string, number>
  large?: {
    eventsInOneResponse: number
    smallP99AloneMs: number
    smallP99UnderLoadMs: number
    p99Ratio: number
    largeBeside: Metrics
    frameworkCeiling?: { smallP99AloneMs: number, smallP99UnderLoadMs: number, p99Ratio: number, largeBeside: Metrics }
  }
}

const finite = (value: unknown) => typeof value === 'number' && Number.isFinite(value)

// The quick run takes a minute or two: longer than tap's default for a file.
if (skip === false) t.setTimeout(600_000)

t.test('npm run bench -- --quick runs end to end and writes well-formed results', { skip }, async (t) => {
  const dir = t.testdir()
  const resultsDir = join(dir, 'results')
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'run.ts'), '--quick'], {
    cwd: projectRoot,
    // A data folder of its own: nothing shared with a benchmark someone runs meanwhile.
    env: { ...process.env, BENCH_RESULTS_DIR: resultsDir, BENCH_DATA_DIR: join(dir, 'data') },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-6000) })
  child.stdout.resume()
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGTERM') })
  const [code] = await once(child, 'exit')
  t.equal(code, 0, 'the run completes', { stderr })
  t.ok(existsSync(join(resultsDir, 'latest.md')), 'latest.md is written')
  const report = JSON.parse(readFileSync(join(resultsDir, 'latest.json'), 'utf8'))

  t.equal(report.quick, true)
  t.ok(finite(report.machine.cpus) && report.machine.cpus > 0, 'machine: cpus')
  t.ok(finite(report.machine.memoryGB), 'machine: memory')
  t.match(report.machine.node, /^v\d+/, 'machine: node version')
  t.ok(report.dataset.events > 0, 'the data set has events')
  t.equal(report.dataset.influx.points, report.dataset.events, 'InfluxDB holds every event')
  t.ok(!Number.isNaN(Date.parse(report.date)), 'date')

  const rows = report.scenarios as Row[]
  t.same(rows.map((row) => `${row.scenario}/${row.store}`).sort(), [...EXPECTED].sort(), 'every scenario on its stores, once')
  for (const row of rows) {
    const name = `${row.scenario}/${row.store}`
    const runs: Array<[string, Metrics]> = [['provider', row.provider], ['framework ceiling', row.frameworkCeiling]]
    if (row.store === 'influxdb') {
      t.ok(row.storeCeiling !== undefined, `${name}: the raw InfluxDB ceiling is measured`)
      if (row.storeCeiling !== undefined) runs.push(['raw InfluxDB', row.storeCeiling])
      t.ok(finite(row.ratios.store?.reqPerSec) && finite(row.ratios.store?.p50), `${name}: ratios to the raw query are finite`)
    }
    for (const [label, metrics] of runs) {
      t.ok(metrics.requests > 0 && finite(metrics.reqPerSec) && metrics.reqPerSec > 0, `${name} ${label}: requests/s`)
      for (const key of ['p50', 'p97_5', 'p99']) t.ok(finite(metrics.latencyMs[key]), `${name} ${label}: latency ${key}`)
      t.equal(metrics.errors + metrics.timeouts, 0, `${name} ${label}: no errors`)
      t.equal(metrics.unexpectedStatuses, 0, `${name} ${label}: no unexpected statuses`)
      t.ok(finite(metrics.non2xx), `${name} ${label}: non-2xx counted`)
    }
    t.ok(finite(row.ratios.framework.reqPerSec) && finite(row.ratios.framework.p50), `${name}: ratios to the framework ceiling are finite`)
    for (const key of ['startMB', 'peakMB', 'growthMB', 'endMB']) t.ok(finite(row.rss[key]), `${name}: rss ${key}`)
    if (row.scenario === 'large') {
      t.ok(row.large !== undefined && row.large.eventsInOneResponse > 0, `${name}: events counted in one answer`)
      t.ok(finite(row.large?.smallP99AloneMs) && finite(row.large?.smallP99UnderLoadMs) && finite(row.large?.p99Ratio), `${name}: small p99 alone and under load`)
      // Without a large answer read to the end beside them, "beside large" measured nothing.
      t.ok(row.large !== undefined && row.large.largeBeside.requests > 0 && row.large.largeBeside.errors === 0, `${name}: large answers were read beside the small requests`)
      // The same check on the framework ceiling, for the memory store's row only.
      const ceiling = row.large?.frameworkCeiling
      if (row.store === 'memory') {
        t.ok(ceiling !== undefined && finite(ceiling.p99Ratio) && ceiling.largeBeside.requests > 0 && ceiling.largeBeside.errors === 0, `${name}: the framework ceiling's small p99 alone and beside its large answers`)
      } else {
        t.equal(ceiling, undefined, `${name}: no framework ceiling's check beside the InfluxDB store's`)
      }
    }
  }

  const placement = report.method.cpuPlacement
  t.ok(['separate', 'shared'].includes(placement.mode), 'the CPU placement of the InfluxDB scenarios is recorded')
  t.ok(placement.storeCpus.length > 0 && placement.otherCpus.length > 0, 'CPUs for influxd and for the rest')
  if (placement.mode === 'separate') t.equal(placement.storeCpus.filter((cpu: number) => placement.otherCpus.includes(cpu)).length, 0, 'separate CPUs do not overlap')
  const attack = report.pipelining
  t.ok(finite(attack.rssMB.growth) && finite(attack.p99Ratio), 'the pipelined attack: RSS growth and small p99 beside it')
  t.ok(attack.smallBeside.requests > 0, 'small requests were answered beside the attack')
  t.equal(report.loadGrowth.length, 3, 'three loads of growing size')
  t.ok(report.loadGrowth.every((point: Record<string, number>) => (point.events ?? 0) > 0 && finite(point.loadSeconds) && finite(point.peakRssMB) && finite(point.ratio)), 'each with its time, ratio and memory')
  t.ok(typeof report.workers.supported === 'boolean' && typeof report.workers.note === 'string', 'the WORKERS comparison says whether it ran')
  if (report.workers.supported === true) t.ok(finite(report.workers.reqPerSecRatio), 'WORKERS ratio')
  t.ok(report.targets.length > 0 && report.targets.every((target: { pass: unknown, value: unknown }) => typeof target.pass === 'boolean' && finite(target.value)), 'targets are evaluated')
  t.notMatch(readFileSync(join(resultsDir, 'latest.json'), 'utf8'), projectRoot, 'no path of this machine in the results')
})
