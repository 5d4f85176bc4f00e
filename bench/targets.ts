import type { ScenarioResult } from './measure-scenario.js'
import type { PipeliningAttackResult } from './pipelining-attack.js'

/** What every load run counts. */
interface RunCounts {
  /** Connection errors, timeouts included (autocannon counts them in both). */
  errors: number
  unexpectedStatuses: number
}

/** One target of one scenario row: printed pass or fail, never a reason to fail the run. */
export interface TargetCheck {
  scenario: string
  store: string
  target: string
  value: number
  limit: number
  pass: boolean
}

const check = (row: ScenarioResult, target: string, value: number, comparison: '>=' | '<=' | '<' | '==', limit: number): TargetCheck => ({
  scenario: row.scenario,
  store: row.store,
  target,
  value,
  limit,
  pass: comparison === '>=' ? value >= limit : comparison === '<=' ? value <= limit : comparison === '<' ? value < limit : value === limit
})

/** Every load run of a row: the provider, its ceilings, and the large scenario's extra runs. */
function everyRun (row: ScenarioResult): RunCounts[] {
  const runs: RunCounts[] = [row.provider, row.frameworkCeiling]
  if (row.storeCeiling !== undefined) runs.push(row.storeCeiling)
  if (row.large !== undefined) runs.push(row.large.smallAlone, row.large.smallUnderLoad, row.large.largeBeside)
  return runs
}

export function evaluateTargets (rows: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = []
  for (const row of rows) {
    const key = `${row.scenario}/${row.store}`
    if (key === 'small/memory') checks.push(check(row, 'req/s ≥ 50% of the framework ceiling', row.ratios.framework.reqPerSec, '>=', 0.5))
    if (key === 'specifications/memory') checks.push(check(row, 'req/s ≥ 80% of the framework ceiling', row.ratios.framework.reqPerSec, '>=', 0.8))
    if ((row.scenario === 'small' || row.scenario === 'medium') && row.store === 'influxdb' && row.ratios.store !== undefined) {
      checks.push(check(row, 'p50 ≤ 1.3× the raw InfluxDB query', row.ratios.store.p50, '<=', 1.3))
      checks.push(check(row, 'req/s ≥ 75% of the raw InfluxDB query', row.ratios.store.reqPerSec, '>=', 0.75))
    }
    if (row.scenario === 'large') {
      checks.push(check(row, 'RSS growth < 100 MB', row.rss.growthMB, '<', 100))
      if (row.large !== undefined) {
        checks.push(check(row, 'small p99 beside large < 3× small p99 alone', row.large.p99Ratio, '<', 3))
        checks.push(check(row, 'the answer is streamed (chunked)', row.large.streamed ? 1 : 0, '==', 1))
      }
    }
    if (row.scenario === 'lookup' && row.store === 'influxdb') {
      const small = rows.find((other) => other.scenario === 'small' && other.store === 'influxdb')
      if (small !== undefined) checks.push(check(row, 'p50 ≤ 10× the small scenario\'s p50 on the same store', row.provider.latencyMs.p50 / small.provider.latencyMs.p50, '<=', 10))
    }
    const runs = everyRun(row)
    checks.push(check(row, 'no errors or timeouts', runs.reduce((sum, run) => sum + run.errors, 0), '==', 0))
    checks.push(check(row, 'no unexpected statuses', runs.reduce((sum, run) => sum + run.unexpectedStatuses, 0), '==', 0))
  }
  return checks
}

/** The pipelined attack's targets (the hardening issue's first item). */
export function evaluateAttackTargets (attack: PipeliningAttackResult): TargetCheck[] {
  const row = { scenario: 'pipelined attack', store: 'memory' }
  const targetOf = (target: string, value: number, pass: boolean, limit: number): TargetCheck => ({ ...row, target, value, limit, pass })
  return [
    targetOf('RSS growth < 200 MB', attack.rssMB.growth, attack.rssMB.growth < 200, 200),
    targetOf('small p99 beside the attack < 3× small p99 alone', attack.p99Ratio, attack.p99Ratio < 3, 3),
    targetOf('no errors or timeouts (small requests)', attack.smallAlone.errors + attack.smallBeside.errors, attack.smallAlone.errors + attack.smallBeside.errors === 0, 0)
  ]
}
