import { parseArgs } from 'node:util'
import { join, resolve } from 'node:path'
import { projectRoot } from '../src/project-root.js'

/** The size of the generated data set (the generator's options, without --end and --out). */
export interface DatasetSize {
  devices: number
  spaces: number
  codes: number
  days: number
  seed: number
}

/** How long and how hard each measurement runs. */
export interface Profile {
  name: 'full' | 'quick'
  dataset: DatasetSize
  /** Seconds of one measurement (one round of one target). */
  durationSec: number
  /**
   * Seconds of unrecorded load on each contender before its first round (0: none). autocannon
   * stops on its one-second tick, so every load lasts at least a second.
   */
  warmupSec: number
  /**
   * Seconds of the small request on a provider just started, before its first scenario (0: none).
   * V8 compiles the provider's paths in threads of its own, on the same CPUs: on the 2 cores of
   * BENCHMARKS.md the provider's CPU per small request fell for its first 5 s of load (InfluxDB:
   * 424 → 235 → 165 µs), so a 2 s warm-up left the first round of the first scenarios slower
   * than the later ones (small/InfluxDB p50 3.66 ms against 2.80 and 2.74).
   */
  freshProviderWarmupSec: number
  /** Provider-then-ceiling rounds per scenario. */
  rounds: number
  /** Concurrent connections of every measurement but the large scenario's. */
  connections: number
  /**
   * The large scenario (about 100,000 events, 19 MB an answer): fewer connections and longer
   * rounds, so that each round completes several answers even from InfluxDB.
   */
  large: { connections: number, durationSec: number }
  /** Connections looping large requests while small ones are measured. */
  loadConnections: number
  /** Interval of the provider's RSS sampling. */
  rssSampleMs: number
  /** The live events measurements (bench/live.ts). */
  live: LiveProfile
}

/** How hard the live events measurements (ingest, push) run. */
export interface LiveProfile {
  /** Events per POST of the ingest throughput measurement. */
  ingestBatch: number
  /** Clients posting batches in a loop, each waiting for its answer before the next. */
  ingestClients: number
  /** Stream subscribers of the push latency at the high rate, beside one MQTT subscriber. */
  pushSubscribers: number
  /** Events per second of that measurement, and per POST. */
  pushRate: number
  pushPerPost: number
  /** Stream subscribers of the push latency at the low rate. */
  manySubscribers: number
  manyRate: number
  manyPerPost: number
  /** The background ingest beside the small requests: events per second, and per POST. */
  besideRate: number
  besidePerPost: number
}

const LIVE: LiveProfile = {
  ingestBatch: 1000,
  ingestClients: 4,
  pushSubscribers: 100,
  pushRate: 1000,
  pushPerPost: 50,
  manySubscribers: 10_000,
  manyRate: 100,
  manyPerPost: 10,
  besideRate: 1000,
  besidePerPost: 50
}

export const FULL: Profile = {
  name: 'full',
  dataset: { devices: 5000, spaces: 500, codes: 200, days: 365, seed: 1 },
  durationSec: 5,
  warmupSec: 2,
  freshProviderWarmupSec: 8,
  rounds: 3,
  connections: 10,
  large: { connections: 2, durationSec: 10 },
  loadConnections: 2,
  rssSampleMs: 50,
  live: LIVE
}

export const QUICK: Profile = {
  name: 'quick',
  dataset: { devices: 100, spaces: 20, codes: 40, days: 30, seed: 1 },
  durationSec: 1,
  warmupSec: 0,
  freshProviderWarmupSec: 0,
  rounds: 2,
  connections: 10,
  large: { connections: 2, durationSec: 1 },
  loadConnections: 2,
  rssSampleMs: 50,
  // 1,000 streams, not 10,000: CI machines often allow a process 1,024 open files or a few more.
  live: { ...LIVE, manySubscribers: 1000 }
}

/** What `--only` can select. */
export const PARTS = ['live', 'compression'] as const
export type Part = typeof PARTS[number]

export interface BenchOptions {
  profile: Profile
  /** Where latest.json and latest.md go (--results DIR or BENCH_RESULTS_DIR; default bench/results). */
  resultsDir: string
  /** Where data sets and InfluxDB data are kept between runs (--data DIR or BENCH_DATA_DIR; default bench/data). */
  dataRoot: string
  /** Write a CPU profile of the memory-store provider during the small scenario into the results folder. */
  cpuProfile: boolean
  /** Give influxd CPUs of its own during the InfluxDB scenarios (off with --shared-cores). */
  separateStoreCpus: boolean
  /**
   * Only this part (--only live, --only compression): everything else is skipped, and the results
   * go to latest-<part>.json and .md, so a partial run never replaces the full run's latest.json.
   * undefined: everything.
   */
  only: Part | undefined
}

export const USAGE = `Usage: npm run bench -- [--quick] [--only live|compression] [--results DIR] [--data DIR] [--cpu-prof]

  --quick        a tiny data set and 1 s measurements (CI); the default is the full run
  --only live    only the live events measurements (ingest throughput, push latency, small requests
                 beside an ingest); results in latest-live.json and latest-live.md
  --only compression
                 only the large answer uncompressed against gzip, on a memory-store provider of its
                 own (no InfluxDB); results in latest-compression.json and latest-compression.md
  --results DIR  where latest.json and latest.md are written (also BENCH_RESULTS_DIR; default bench/results)
  --data DIR     where generated data sets and InfluxDB data are kept (also BENCH_DATA_DIR; default bench/data)
  --cpu-prof     also profile the memory-store provider during the small scenario (a .cpuprofile in the results folder)
  --shared-cores run influxd on the same CPUs as the provider and the load generator (by default it
                 gets CPUs of its own during the InfluxDB scenarios, as in a deployment)`

export class UsageError extends Error {
  override name = 'UsageError'
}

export function parseBenchOptions (args: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  let values
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        quick: { type: 'boolean' },
        results: { type: 'string' },
        data: { type: 'string' },
        'cpu-prof': { type: 'boolean' },
        'shared-cores': { type: 'boolean' },
        only: { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      },
      strict: true,
      allowPositionals: false
    }))
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (values.help === true) throw new UsageError('')
  const nonEmpty = (value: string | undefined) => value === undefined || value === '' ? undefined : value
  const only = values.only
  if (only !== undefined && !(PARTS as readonly string[]).includes(only)) {
    throw new UsageError(`--only takes one of: ${PARTS.join(', ')}; got ${JSON.stringify(only)}`)
  }
  return {
    profile: values.quick === true ? QUICK : FULL,
    resultsDir: resolve(nonEmpty(values.results) ?? nonEmpty(env.BENCH_RESULTS_DIR) ?? join(projectRoot, 'bench', 'results')),
    dataRoot: resolve(nonEmpty(values.data) ?? nonEmpty(env.BENCH_DATA_DIR) ?? join(projectRoot, 'bench', 'data')),
    cpuProfile: values['cpu-prof'] === true,
    separateStoreCpus: values['shared-cores'] !== true,
    only: only as Part | undefined
  }
}
