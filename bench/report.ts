import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describeCpuPlacement, type CpuPlacement } from './cpu-placement.js'
import type { CompressionResult, CompressionRun } from './compression.js'
import type { Dataset } from './dataset.js'
import type { InfluxStore } from './influx-store.js'
import type { Machine } from './machine.js'
import { SLICE_SEC, type ScenarioResult } from './measure-scenario.js'
import type { LiveResult } from './live.js'
import type { LoadGrowthPoint } from './load-growth.js'
import type { PipeliningAttackResult } from './pipelining-attack.js'
import type { Part, Profile } from './options.js'
import type { PushRun } from './push-latency.js'
import type { SmallProfile } from './profile-small.js'
import type { Revision } from './revision.js'
import type { Metrics } from './stats.js'
import type { TargetCheck } from './targets.js'
import type { WorkersComparison } from './workers.js'

/** bench/results/latest.json. It names no path of the machine it ran on. */
export interface BenchReport {
  date: string
  quick: boolean
  /** The part measured alone (--only), undefined for a whole run. */
  only: Part | undefined
  machine: Machine
  /** The provider code measured. */
  revision: Revision
  dataset: {
    key: string
    options: Dataset['size'] & { end: string }
    events: number
    reused: boolean
    generateSeconds: number | undefined
    picks: Dataset['picks']
    /** undefined with --only compression (no InfluxDB started). */
    influx: { points: number, reused: boolean, ingestSeconds: number | undefined, settleSeconds: number } | undefined
  }
  method: {
    rounds: number
    durationSec: number
    warmupSec: number
    /** The small request's load on each provider just started, before its first scenario. */
    freshProviderWarmupSec: number
    connections: number
    large: Profile['large']
    loadConnections: number
    rssSampleMs: number
    order: string
    /** Where influxd and the rest ran during the InfluxDB scenarios (the memory scenarios share every CPU). */
    cpuPlacement: CpuPlacement
  }
  /** Empty with --only live. */
  scenarios: ScenarioResult[]
  /** Small requests beside connections that pipeline requests and read nothing (not with --only live). */
  pipelining: PipeliningAttackResult | undefined
  /** The memory store loading a quarter, half and all of the data set (not with --only live). */
  loadGrowth: LoadGrowthPoint[] | undefined
  workers: WorkersComparison | undefined
  /** The large answer uncompressed against gzip, memory store (not with --only live). */
  compression: CompressionResult | undefined
  /** Ingest throughput, push latency, small requests beside an ingest (not with --only compression). */
  live: LiveResult | undefined
  targets: TargetCheck[]
  targetsMissed: number
  cpuProfile: SmallProfile | undefined
  durationSec: number
}

export interface ReportInput {
  profile: Profile
  only: Part | undefined
  placement: CpuPlacement
  machine: Machine
  revision: Revision
  dataset: Dataset
  influx: InfluxStore | undefined
  scenarios: ScenarioResult[]
  pipelining: PipeliningAttackResult | undefined
  loadGrowth: LoadGrowthPoint[] | undefined
  workers: WorkersComparison | undefined
  compression: CompressionResult | undefined
  live: LiveResult | undefined
  targets: TargetCheck[]
  cpuProfile: SmallProfile | undefined
  durationSec: number
}

export function buildReport (input: ReportInput): BenchReport {
  const { profile, dataset, influx } = input
  return {
    date: new Date().toISOString(),
    quick: profile.name === 'quick',
    only: input.only,
    machine: input.machine,
    revision: input.revision,
    dataset: {
      key: dataset.key,
      options: { ...dataset.size, end: new Date(dataset.endMs).toISOString() },
      events: dataset.events,
      reused: dataset.reused,
      generateSeconds: dataset.generateSeconds,
      picks: dataset.picks,
      influx: influx === undefined ? undefined : { points: influx.points, reused: influx.reused, ingestSeconds: influx.ingestSeconds, settleSeconds: influx.settleSeconds }
    },
    method: {
      rounds: profile.rounds,
      durationSec: profile.durationSec,
      warmupSec: profile.warmupSec,
      freshProviderWarmupSec: profile.freshProviderWarmupSec,
      connections: profile.connections,
      large: profile.large,
      loadConnections: profile.loadConnections,
      rssSampleMs: profile.rssSampleMs,
      order: 'per scenario: warm-up of each, then rounds of provider, framework ceiling, raw InfluxDB query (InfluxDB scenarios)',
      cpuPlacement: input.placement
    },
    scenarios: input.scenarios,
    pipelining: input.pipelining,
    loadGrowth: input.loadGrowth,
    workers: input.workers,
    compression: input.compression,
    live: input.live,
    targets: input.targets,
    targetsMissed: input.targets.filter((target) => !target.pass).length,
    cpuProfile: input.cpuProfile,
    durationSec: input.durationSec
  }
}

const int = (value: number) => Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–'
const ms = (value: number) => Number.isFinite(value) ? (value < 10 ? value.toFixed(2) : value.toFixed(1)) : '–'
const pct = (value: number) => Number.isFinite(value) ? `${Math.round(value * 100)}%` : '–'
const times = (value: number) => Number.isFinite(value) ? `${value.toFixed(2)}×` : '–'
const mb = (value: number) => Number.isFinite(value) ? value.toFixed(0) : '–'

function latencies (metrics: Metrics): string {
  const { p50, p97_5: p975, p99 } = metrics.latencyMs
  return `${ms(p50)} / ${ms(p975)} / ${ms(p99)}`
}

function targetValue (target: TargetCheck): string {
  if (target.target.includes('correct')) return target.value === 1 ? 'yes' : 'no'
  if (target.target.includes('bytes per answer')) return Number.isFinite(target.value) ? `${(target.value * 100).toFixed(1)}%` : '–'
  if (target.target.endsWith(' ms')) return `${ms(target.value)} ms`
  if (target.target.includes('%')) return pct(target.value)
  if (target.target.includes('MB')) return `${target.value.toFixed(1)} MB`
  if (target.target.includes('×')) return times(target.value)
  if (target.target.includes('streamed')) return target.value === 1 ? 'yes' : 'no'
  return String(target.value)
}

function rowTargets (row: ScenarioResult, targets: readonly TargetCheck[]): string {
  const mine = targets.filter((target) => target.scenario === row.scenario && target.store === row.store)
  const failed = mine.filter((target) => !target.pass)
  if (failed.length === 0) return `pass (${mine.length})`
  return 'FAIL: ' + failed.map((target) => `${target.target} (${targetValue(target)})`).join('; ')
}

/** bench/results/latest.md: the tables BENCHMARKS.md shows. */
export function renderMarkdown (report: BenchReport): string {
  const { machine, dataset, method } = report
  const lines: string[] = []
  const partial = report.only === undefined ? '' : ` (--only ${report.only})`
  lines.push(`# Benchmark results${partial}${report.quick ? ' (QUICK run: tiny data set, short measurements — not representative)' : ''}`, '')
  lines.push(`- Date: ${report.date}; the run took ${Math.round(report.durationSec)} s`)
  const changed = report.revision.uncommittedFiles
  lines.push(`- Provider code: commit ${report.revision.commit ?? 'unknown'}${changed.length === 0 ? '' : ` with uncommitted changes to ${changed.join(', ')}`}`)
  lines.push(`- Machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGB} GB, Node.js ${machine.node}, ${machine.platform}, InfluxDB ${machine.influxd ?? 'unknown'}${machine.stealPercent === undefined ? '' : `; CPU time taken by the host (steal) over the run: ${machine.stealPercent}%`}`)
  lines.push(`- Data set: ${dataset.events.toLocaleString('en-US')} events (${dataset.options.devices} devices, ${dataset.options.spaces} spaces, ${dataset.options.codes} codes, ${dataset.options.days} days to ${dataset.options.end}, seed ${dataset.options.seed})`)
  const warmup = method.warmupSec > 0 ? `after a ${method.warmupSec} s warm-up` : 'without warm-up'
  if (report.only === 'compression') {
    lines.push(`- Method: the large request on ${method.large.connections} connections, ${method.rounds} rounds of ${method.large.durationSec} s per contender ${warmup}, uncompressed and gzip in turns; RSS of the provider every ${method.rssSampleMs} ms`)
  } else {
    lines.push(`- Method: ${method.connections} connections (large: ${method.large.connections}), ${method.rounds} rounds of ${method.durationSec} s (large: ${method.large.durationSec} s) per contender ${warmup}${method.freshProviderWarmupSec > 0 ? ` (and ${method.freshProviderWarmupSec} s of the small request on each provider just started)` : ''}, provider and ceilings in turns${method.durationSec > SLICE_SEC ? ` (the memory store's scenarios but the large one, and WORKERS, in slices of ${SLICE_SEC} s: each contender's second in turn, every other slice in the reverse order)` : ''}; RSS of the provider's process tree every ${method.rssSampleMs} ms`)
  }
  if (report.only !== 'compression') lines.push(`- CPUs: memory scenarios share every CPU; InfluxDB scenarios: ${describeCpuPlacement(method.cpuPlacement)}`)
  lines.push('')
  if (report.scenarios.length > 0) renderScenarios(report, lines)
  if (report.compression !== undefined) renderCompression(report.compression, lines)
  if (report.live !== undefined) renderLive(report.live, lines)

  lines.push('', '## Targets', '')
  lines.push('| scenario | store | target | value | result |')
  lines.push('|---|---|---|--:|---|')
  for (const target of report.targets) {
    lines.push(`| ${target.scenario} | ${target.store} | ${target.target} | ${targetValue(target)} | ${target.pass ? 'pass' : '**FAIL**'} |`)
  }
  lines.push('', `${report.targetsMissed} of ${report.targets.length} targets missed.`)

  if (report.cpuProfile !== undefined) {
    const profile = report.cpuProfile
    lines.push('', `## CPU profile: small, memory store (${profile.durationSec} s at ${int(profile.reqPerSec)} req/s, --cpu-prof)`, '')
    lines.push('| function | self ms | self % |')
    lines.push('|---|--:|--:|')
    for (const hot of profile.top) lines.push(`| \`${hot.name}\` | ${hot.selfMs} | ${hot.selfPercent} |`)
  }
  return lines.join('\n') + '\n'
}

/** The scenarios' table, large answers, the pipelined attack, loading and WORKERS. */
function renderScenarios (report: BenchReport, lines: string[]): void {
  lines.push('Latencies are p50 / p97.5 / p99 in milliseconds. "vs framework" is the provider\'s requests/s as a share of the bare Fastify server serving the same bytes, and its p50 as a multiple of that server\'s; "vs raw" the same against the raw InfluxDB query.', '')
  lines.push('| scenario | store | answer | req/s | latency ms | errors | non-2xx (unexpected) | RSS MB start → peak (growth), end | framework ceiling req/s, latency ms | vs framework req/s, p50 | raw InfluxDB req/s, latency ms | vs raw req/s, p50 | targets |')
  lines.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|')
  for (const row of report.scenarios) {
    const answer = `${row.response.status}, ${row.response.events === undefined ? '' : `${int(row.response.events)} events, `}${int(row.response.bytes)} B`
    const errors = row.provider.errors
    const raw = row.storeCeiling === undefined ? '' : `${int(row.storeCeiling.reqPerSec)}, ${latencies(row.storeCeiling)}`
    const vsRaw = row.ratios.store === undefined ? '' : `${pct(row.ratios.store.reqPerSec)}, ${times(row.ratios.store.p50)}`
    lines.push(`| ${row.scenario} | ${row.store} | ${answer} | ${int(row.provider.reqPerSec)} | ${latencies(row.provider)} | ${errors} | ${row.provider.non2xx} (${row.provider.unexpectedStatuses}) | ` +
      `${mb(row.rss.startMB)} → ${mb(row.rss.peakMB)} (+${mb(row.rss.growthMB)}), ${mb(row.rss.endMB)} | ${int(row.frameworkCeiling.reqPerSec)}, ${latencies(row.frameworkCeiling)} | ` +
      `${pct(row.ratios.framework.reqPerSec)}, ${times(row.ratios.framework.p50)} | ${raw} | ${vsRaw} | ${rowTargets(row, report.targets)} |`)
  }

  lines.push('', '## Large answers', '')
  lines.push('| store | streamed (transfer-encoding) | events in one answer | bytes | small p99 alone ms | small p99 beside large ms | ratio | large req/s beside |')
  lines.push('|---|---|--:|--:|--:|--:|--:|--:|')
  for (const row of report.scenarios) {
    const large = row.large
    if (large === undefined) continue
    lines.push(`| ${row.store} | ${large.streamed ? 'yes' : 'NO'} (${large.transferEncoding ?? 'none'}) | ${int(large.eventsInOneResponse)} | ${int(large.bytesOfOneResponse)} | ` +
      `${ms(large.smallP99AloneMs)} | ${ms(large.smallP99UnderLoadMs)} | ${times(large.p99Ratio)} | ${large.largeBeside.reqPerSec.toFixed(1)} (${large.loadConnections} connections) |`)
    const ceiling = large.frameworkCeiling
    if (ceiling !== undefined) {
      lines.push(`| framework ceiling, the same bytes (in turns with ${row.store}) | buffer written whole | ${int(large.eventsInOneResponse)} | ${int(large.bytesOfOneResponse)} | ` +
        `${ms(ceiling.smallP99AloneMs)} | ${ms(ceiling.smallP99UnderLoadMs)} | ${times(ceiling.p99Ratio)} | ${ceiling.largeBeside.reqPerSec.toFixed(1)} (${large.loadConnections} connections) |`)
    }
  }

  const attack = report.pipelining
  if (attack === undefined || report.loadGrowth === undefined || report.workers === undefined) return
  lines.push('', '## Pipelined attack (memory store)', '')
  lines.push(`${attack.connections} connections each write ${int(attack.requestsPerConnection)} pipelined requests for a year of events (\`${attack.path.replace(/\?.*/, '?start_date=…&end_date=…')}\`) and never read; the small requests run on other connections.`, '')
  lines.push('| RSS MB start → peak (growth), end | small p99 alone ms | small p99 beside the attack ms | ratio | small req/s alone, beside |')
  lines.push('|--:|--:|--:|--:|--:|')
  lines.push(`| ${mb(attack.rssMB.start)} → ${mb(attack.rssMB.peak)} (+${mb(attack.rssMB.growth)}), ${mb(attack.rssMB.end)} | ${ms(attack.smallAlone.latencyMs.p99)} | ${ms(attack.smallBeside.latencyMs.p99)} | ${times(attack.p99Ratio)} | ${int(attack.smallAlone.reqPerSec)}, ${int(attack.smallBeside.reqPerSec)} |`)

  lines.push('', '## Loading the memory store', '')
  lines.push('The provider started on the first quarter, half and all of the events file: its own load time (from opening the file to the store ready, as it logs it) against a bare script reading the same lines and `JSON.parse`-ing each, and its memory.', '')
  lines.push('| events | load s | events/s | JSON.parse alone s | ratio | peak RSS while loading MB | RSS loaded MB | RSS per event B |')
  lines.push('|--:|--:|--:|--:|--:|--:|--:|--:|')
  for (const point of report.loadGrowth) {
    lines.push(`| ${int(point.events)} | ${point.loadSeconds.toFixed(1)} | ${int(point.events / point.loadSeconds)} | ${point.parseSeconds.toFixed(1)} | ${times(point.ratio)} | ${mb(point.peakRssMB)} | ${mb(point.rssMB)} | ${int(point.bytesPerEvent)} |`)
  }

  const { workers } = report
  lines.push('', '## WORKERS (small, memory store)', '')
  if (workers.supported && workers.oneProcess !== undefined && workers.allCores !== undefined) {
    lines.push(`${workers.note}; ${workers.cpus} CPUs shared with the load generator.`, '')
    lines.push('| provider | req/s | latency ms | RSS MB (all processes) |')
    lines.push('|---|--:|--:|--:|')
    lines.push(`| one process | ${int(workers.oneProcess.reqPerSec)} | ${latencies(workers.oneProcess)} | ${mb(workers.rssMB?.oneProcess ?? NaN)} |`)
    lines.push(`| WORKERS=auto (${workers.workerProcesses} workers) | ${int(workers.allCores.reqPerSec)} | ${latencies(workers.allCores)} | ${mb(workers.rssMB?.allCores ?? NaN)} |`)
    lines.push('', `WORKERS=auto serves ${times(workers.reqPerSecRatio ?? NaN)} the requests/s of one process.`)
  } else {
    lines.push(`Not measured: ${workers.note}.`)
  }
}

function compressionRow (run: CompressionRun): string {
  const { mean, p50, p99 } = run.latencyMs
  return `| ${run.label} | ${run.acceptEncoding ?? '(none)'} | ${run.answers} | ${run.answersPerSec.toFixed(1)} | ${ms(mean)} / ${ms(p50)} / ${ms(p99)} | ` +
    `${int(run.bodyBytesPerAnswer)} | ${int(run.wireBytesPerAnswer)} | ${ms(run.providerCpuMsPerAnswer)} (${ms(run.providerMainThreadCpuMsPerAnswer)}), ${ms(run.readerCpuMsPerAnswer)} | ` +
    `${mb(run.rssMB.peak)} (+${mb(run.rssMB.growth)}) | ${run.errors} | ${run.unexpectedStatuses} |`
}

/** The large answer uncompressed against gzip. */
function renderCompression (compression: CompressionResult, lines: string[]): void {
  const { answer, uncompressed, gzip, ratios } = compression
  lines.push('', '## Compression (large, memory store)', '')
  lines.push(`The large scenario's request (${int(compression.events)} events) without Accept-Encoding and with \`Accept-Encoding: gzip\`, ` +
    `${compression.rounds} rounds of ${compression.durationSec} s each in turns on ${compression.connections} connections` +
    `${compression.warmupSec > 0 ? ` after a ${compression.warmupSec} s warm-up of each` : ''}, every answer read to its last byte by node:http and never decompressed. ` +
    'Time: from sending the request to the last byte. Bytes per answer: the body as received, and everything read from the socket (status line, headers, chunked framing). ' +
    `CPU per answer: the provider's process, all threads (in brackets its main thread alone; zlib works on libuv's pool), and the reading process, over the rounds. RSS: the provider's, baseline ${mb(compression.rssMB.baseline)} MB before the warm-up.`, '')
  lines.push('| answer | Accept-Encoding | answers | answers/s | time per answer mean / p50 / p99 ms | body bytes per answer | bytes on the wire per answer | CPU ms per answer: provider (main thread), reader | provider RSS peak MB (growth) | errors | unexpected statuses |')
  lines.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  lines.push(compressionRow(uncompressed))
  lines.push(compressionRow(gzip))
  lines.push('', `gzip against uncompressed: bytes on the wire ${(ratios.bytes * 100).toFixed(1)}%, time per answer p50 ${times(ratios.p50)} (mean ${times(ratios.mean)}), answers/s ${pct(ratios.answersPerSec)}. ` +
    `Per round, answers/s: uncompressed ${uncompressed.perRound.map((round) => round.answersPerSec.toFixed(1)).join(' / ')}; gzip ${gzip.perRound.map((round) => round.answersPerSec.toFixed(1)).join(' / ')}.`)
  lines.push('', `One answer of each, before the rounds: uncompressed ${int(answer.uncompressedBytes)} B (Content-Encoding ${answer.uncompressedContentEncoding ?? 'none'}); ` +
    `gzip ${int(answer.gzipBytes)} B, Content-Encoding ${answer.gzipContentEncoding ?? 'none'}, Transfer-Encoding ${answer.gzipTransferEncoding ?? 'none'}, ` +
    `Content-Length ${answer.gzipContentLength ?? 'none'}; it decompresses to exactly the uncompressed answer's bytes: ${answer.decompressesToUncompressed ? 'yes' : '**NO**'}. ` +
    `The same answer gzipped in one call (gzipSync) in the benchmark's process: ${compression.zlibAlone.map((run) => `level ${run.level}${run.level === 6 ? ' (zlib\'s default, what @fastify/compress uses without zlibOptions)' : ''} ${ms(run.ms)} ms, ${int(run.bytes)} B`).join('; ')}.`)
}

const share = (part: number, whole: number) => whole > 0 ? `${(100 * part / whole).toFixed(part > 0 && part < whole / 100 ? 2 : 0)}%` : '–'

function pushRow (run: PushRun): string {
  const delivery = (stats: PushRun['sse'] | undefined) => stats === undefined
    ? 'not measured'
    : `${ms(stats.latencyMs.p50)} / ${ms(stats.latencyMs.p99)} / ${ms(stats.latencyMs.max)}`
  const before = (stats: PushRun['sse'] | undefined) => stats === undefined ? '' : share(stats.beforeAnswer, stats.received)
  const missing = run.sse.missing + (run.mqttDelivery?.missing ?? 0)
  const { rssMB } = run
  const perStream = run.streams > 0 ? (rssMB.connected - rssMB.before) * 1024 / run.streams : NaN
  return `| ${int(run.streams)}${run.mqtt ? ' + 1 MQTT' : ''} | ${int(run.ratePerSec)} (${run.perPost} per POST every ${run.intervalMs} ms) | ${int(run.posted.events)} | ` +
    `${delivery(run.sse)} | ${ms(run.sse.fromPostMs.p50)} / ${ms(run.sse.fromPostMs.p99)} | ${delivery(run.mqttDelivery)} | ` +
    `${before(run.sse)}${run.mqttDelivery === undefined ? '' : `, MQTT ${before(run.mqttDelivery)}`} | ${missing} | ` +
    `${ms(run.posted.postLatencyMs.p50)} / ${ms(run.posted.postLatencyMs.p99)} | ${run.cpu.providerPercent.toFixed(0)}%, ${run.cpu.subscribersPercent.toFixed(0)}% | ` +
    `${mb(rssMB.before)} → ${mb(rssMB.connected)} (+${mb(rssMB.connected - rssMB.before)}, ${Number.isFinite(perStream) ? perStream.toFixed(1) : '–'} KB a stream), ${mb(rssMB.peak)}, ${mb(rssMB.after)} |`
}

/** Ingest throughput, push latency, small requests beside an ingest. */
function renderLive (live: LiveResult, lines: string[]): void {
  const { memory, influxdb } = live.ingest
  lines.push('', '## Live events (ingest and push)', '')
  lines.push('### Ingest throughput', '')
  lines.push(`Batches of ${int(memory.batchEvents)} new events (NDJSON), ${memory.clients} clients each posting its next batch once the last is answered; the provider's events/s (as written in its answers) against its ceiling's, in turns. InfluxDB: ${live.influxCpuPlacement}.`, '')
  lines.push('| store | before the ingest | provider events/s | batch p50 / p99 ms | ceiling | ceiling events/s | ceiling batch p50 / p99 ms | provider / ceiling | provider RSS MB before → after |')
  lines.push('|---|---|--:|--:|---|--:|--:|--:|--:|')
  for (const ingest of [memory, influxdb]) {
    lines.push(`| ${ingest.store} | ${ingest.storedBefore} | ${int(ingest.provider.eventsPerSec)} | ${ms(ingest.provider.batchLatencyMs.p50)} / ${ms(ingest.provider.batchLatencyMs.p99)} | ${ingest.ceilingDescription} | ` +
      `${int(ingest.ceiling.eventsPerSec)} | ${ms(ingest.ceiling.batchLatencyMs.p50)} / ${ms(ingest.ceiling.batchLatencyMs.p99)} | ${pct(ingest.ratio)} | ${mb(ingest.providerRssMB.start)} → ${mb(ingest.providerRssMB.end)} |`)
  }

  const { push } = live
  lines.push('', '### Push latency', '')
  lines.push(`A memory-store provider (${int(push.eventsInFile)} events in its file${push.broker === undefined ? ', no MQTT: mosquitto is not installed' : `, MQTT_URL to ${push.broker}`}); the subscribers in a process of their own, events posted from another. ` +
    'Latency: receipt at a subscriber minus the moment the posting client got the 200 of the POST that carried the event; an event that arrived before that 200 counts as 0 ("before the 200").' +
    `${push.note === undefined ? '' : ` Note: ${push.note}.`}`, '')
  lines.push('| subscribers | events/s | events | streams p50 / p99 / max ms | streams from sending the POST p50 / p99 ms | MQTT p50 / p99 / max ms | before the 200 | missing | POST p50 / p99 ms | CPU of a core: provider, subscribers | provider RSS MB before → with the streams (growth), peak, after |')
  lines.push('|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  lines.push(pushRow(push.fast))
  lines.push(pushRow(push.many))

  const beside = live.smallBesideIngest
  lines.push('', '### Small requests beside an ingest (memory store)', '')
  lines.push(`The small scenario's request alone, then beside ${int(beside.ratePerSec)} events/s posted by another process (${beside.perPost} per POST), in turns, on the provider of the memory ingest.`, '')
  lines.push('| small p99 alone ms | small p99 beside the ingest ms | ratio | small req/s alone, beside | events written/s | POST p50 / p99 ms |')
  lines.push('|--:|--:|--:|--:|--:|--:|')
  lines.push(`| ${ms(beside.smallAlone.latencyMs.p99)} | ${ms(beside.smallBeside.latencyMs.p99)} | ${times(beside.p99Ratio)} | ${int(beside.smallAlone.reqPerSec)}, ${int(beside.smallBeside.reqPerSec)} | ` +
    `${int(beside.ingest.eventsPerSec)} | ${ms(beside.ingest.postLatencyMs.p50)} / ${ms(beside.ingest.postLatencyMs.p99)} |`)
}

/** latest.json and latest.md; latest-<part>.json and .md for a run of one part (--only). */
export async function writeReport (resultsDir: string, report: BenchReport): Promise<{ json: string, markdown: string }> {
  await mkdir(resultsDir, { recursive: true })
  const name = report.only === undefined ? 'latest' : `latest-${report.only}`
  const json = join(resultsDir, `${name}.json`)
  const markdown = join(resultsDir, `${name}.md`)
  await writeFile(json, JSON.stringify(report, null, 2) + '\n')
  await writeFile(markdown, renderMarkdown(report))
  return { json, markdown }
}
