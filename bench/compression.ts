import { readFileSync } from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { gunzipSync, gzipSync } from 'node:zlib'
import { capture, countEvents, type Captured } from './capture.js'
import { runClosedLoop, type ClosedLoopCounts, type ClosedLoopTask } from './closed-loop.js'
import { REQUEST_TIMEOUT_SEC, type LoadRequest } from './load.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import type { Provider } from './provider.js'
import { RssSampler } from './rss.js'
import { latencyOf, type Latency } from './stats.js'

/**
 * The large scenario's answer uncompressed (no Accept-Encoding) against the same answer with
 * `Accept-Encoding: gzip` (src/http/compressed-stream.ts pipes a streamed answer
 * through a zlib stream), on the memory-store provider: rounds in turns on the same number of
 * connections, each answer read to its last byte by node:http (a native parser) in this process,
 * its bytes counted as they come, never decompressed.
 */

const MB = 1024 * 1024
/** What zlib's Z_DEFAULT_COMPRESSION (-1) means: the level the provider compresses at (src/http/compressed-stream.ts). */
const ZLIB_DEFAULT_LEVEL = 6

/** What one round of one contender saw: its answers, and the CPU time spent on them. */
interface ReadRound extends ClosedLoopCounts {
  /** CPU seconds of the provider's process during the round: every thread (zlib works on libuv's pool), and its main thread. */
  providerCpuSec: number
  providerMainCpuSec: number
  /** CPU seconds of this process (the reader) during the round. */
  readerCpuSec: number
}

type ReadTask = Omit<ClosedLoopTask, 'timeoutSec'>

/**
 * CPU time (user + system) in seconds from a /proc stat file: of a whole process
 * (/proc/<pid>/stat) or of one of its threads (/proc/<pid>/task/<tid>/stat); 0 once it is gone.
 */
function cpuSecondsOf (statFile: string): number {
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th (USER_HZ, 100 a second).
    const stat = readFileSync(statFile, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

/** The provider's CPU seconds: all its threads, and its main thread (whose thread ID is the process's). */
function providerCpu (pid: number): { all: number, main: number } {
  return { all: cpuSecondsOf(`/proc/${pid}/stat`), main: cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`) }
}

/** One round: the answers read in a closed loop (bench/closed-loop.ts), with the CPU time of both sides up to its deadline. */
async function readRound (task: ReadTask, providerPid: number): Promise<ReadRound> {
  const cpuBefore = { provider: providerCpu(providerPid), reader: process.cpuUsage() }
  const cpu = { providerCpuSec: 0, providerMainCpuSec: 0, readerCpuSec: 0 }
  const counts = await runClosedLoop({ ...task, timeoutSec: REQUEST_TIMEOUT_SEC }, {
    onDeadline: () => {
      const reader = process.cpuUsage(cpuBefore.reader)
      const provider = providerCpu(providerPid)
      cpu.readerCpuSec = (reader.user + reader.system) / 1e6
      cpu.providerCpuSec = provider.all - cpuBefore.provider.all
      cpu.providerMainCpuSec = provider.main - cpuBefore.provider.main
    }
  })
  return { ...counts, ...cpu }
}

/** One contender over all its rounds. */
export interface CompressionRun {
  label: 'uncompressed' | 'gzip'
  /** The Accept-Encoding header sent (none for uncompressed). */
  acceptEncoding: string | undefined
  rounds: number
  answers: number
  durationSec: number
  answersPerSec: number
  /** Per answer, from sending the request to its last byte, over every answer of every round. */
  latencyMs: Latency
  /** Per answer: the body as received (gzip: compressed), and everything read from the socket. */
  bodyBytesPerAnswer: number
  wireBytesPerAnswer: number
  /**
   * CPU per answer, in milliseconds: of the provider's process (all its threads), of its main
   * thread alone (the rest is libuv's pool, where zlib compresses, and V8's helper threads), and of
   * the reading process (the RSS sampler's thread included), over the rounds' time divided by the
   * answers read to the end (the answers abandoned at each round's end add their share).
   */
  providerCpuMsPerAnswer: number
  providerMainThreadCpuMsPerAnswer: number
  readerCpuMsPerAnswer: number
  perRound: Array<{ answersPerSec: number, p50: number }>
  errors: number
  timeouts: number
  unexpectedStatuses: number
  statuses: Record<string, number>
  /** The provider's RSS during this contender's rounds: the highest sampled, and its growth over the baseline. */
  rssMB: { peak: number, growth: number }
}

export interface CompressionResult {
  path: string
  events: number
  connections: number
  durationSec: number
  rounds: number
  warmupSec: number
  /** One answer of each, captured before the rounds: the correctness checks. */
  answer: {
    uncompressedBytes: number
    /** None expected: undefined. */
    uncompressedContentEncoding: string | undefined
    gzipBytes: number
    gzipContentEncoding: string | undefined
    gzipTransferEncoding: string | undefined
    gzipContentLength: string | undefined
    /** gunzip of the gzip answer is exactly the uncompressed answer's bytes. */
    decompressesToUncompressed: boolean
    /** All of it: uncompressed has no Content-Encoding; gzip is gzip, chunked, no Content-Length, and decompresses to it. */
    correct: boolean
  }
  /**
   * The uncompressed answer gzipped in one call (gzipSync) in the benchmark's process at zlib's
   * default level (6, what the provider uses) and at level 1: the
   * compression's own cost per answer, the fastest of three.
   */
  zlibAlone: Array<{ level: number, ms: number, bytes: number }>
  uncompressed: CompressionRun
  gzip: CompressionRun
  /** gzip against uncompressed. */
  ratios: {
    /** Wire bytes per answer. */
    bytes: number
    p50: number
    mean: number
    answersPerSec: number
  }
  /** The provider's RSS before the warm-up (baseline) and after the last round. */
  rssMB: { baseline: number, end: number }
}

function summariseRuns (label: CompressionRun['label'], acceptEncoding: string | undefined, rounds: readonly ReadRound[], rss: { peak: number, baseline: number }): CompressionRun {
  const answers = rounds.reduce((sum, round) => sum + round.latenciesMs.length, 0)
  const durationSec = rounds.reduce((sum, round) => sum + round.durationSec, 0)
  const statuses: Record<string, number> = {}
  for (const round of rounds) {
    for (const [status, count] of Object.entries(round.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  }
  const sum = (pick: (round: ReadRound) => number) => rounds.reduce((total, round) => total + pick(round), 0)
  const perAnswer = (total: number) => answers > 0 ? total / answers : NaN
  return {
    label,
    acceptEncoding,
    rounds: rounds.length,
    answers,
    durationSec,
    answersPerSec: durationSec > 0 ? answers / durationSec : 0,
    latencyMs: latencyOf(Float64Array.from(rounds.flatMap((round) => round.latenciesMs))),
    bodyBytesPerAnswer: perAnswer(sum((round) => round.bodyBytes)),
    wireBytesPerAnswer: perAnswer(sum((round) => round.wireBytes)),
    providerCpuMsPerAnswer: perAnswer(1000 * sum((round) => round.providerCpuSec)),
    providerMainThreadCpuMsPerAnswer: perAnswer(1000 * sum((round) => round.providerMainCpuSec)),
    readerCpuMsPerAnswer: perAnswer(1000 * sum((round) => round.readerCpuSec)),
    perRound: rounds.map((round) => ({
      answersPerSec: round.durationSec > 0 ? round.latenciesMs.length / round.durationSec : 0,
      p50: latencyOf(Float64Array.from(round.latenciesMs)).p50
    })),
    errors: sum((round) => round.errors),
    timeouts: sum((round) => round.timeouts),
    unexpectedStatuses: Object.entries(statuses).filter(([status]) => status !== '200').reduce((total, [, count]) => total + count, 0),
    statuses,
    rssMB: { peak: rss.peak / MB, growth: (rss.peak - rss.baseline) / MB }
  }
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** gzipSync of the body at a level, the fastest of three: zlib's own time for one answer. */
function zlibAlone (body: Buffer, level: number): { level: number, ms: number, bytes: number } {
  let fastest = Infinity
  let bytes = 0
  for (let i = 0; i < 3; i++) {
    const started = performance.now()
    bytes = gzipSync(body, { level }).length
    fastest = Math.min(fastest, performance.now() - started)
  }
  return { level, ms: fastest, bytes }
}

/** How long a provider that answers 503 is asked again before the measurement gives up. */
const UNAVAILABLE_WAIT_MS = 30_000

/**
 * One answer; a 503 is asked again every second for up to UNAVAILABLE_WAIT_MS. A provider that
 * has just loaded a million events may still refuse requests for a moment (its event-loop delay
 * limit, plugins/load-limits.ts, still remembers the load's pauses).
 */
async function captureServed (request: LoadRequest, context: string): Promise<Captured> {
  const deadline = Date.now() + UNAVAILABLE_WAIT_MS
  while (true) {
    const answer = await capture(request)
    if (answer.status !== 503 || Date.now() > deadline) return answer
    log(`${context}: the provider answered 503 (${answer.body.subarray(0, 200).toString()}); asking again in a second`)
    await sleep(1000)
  }
}

/**
 * The large request (`large`, with its authorization) uncompressed and gzipped, in turns:
 * a warm-up of each, then profile.rounds rounds of uncompressed, gzip, on
 * profile.large.connections connections for profile.large.durationSec each. The provider's RSS is
 * sampled from before the warm-up; its CPU and this process's are read at each round's ends.
 */
export async function measureCompression (provider: Provider, large: LoadRequest, profile: Profile): Promise<CompressionResult> {
  const context = 'compression/memory'
  const plainHeaders = { ...large.headers }
  delete plainHeaders['accept-encoding']
  const gzipHeaders = { ...plainHeaders, 'accept-encoding': 'gzip' }

  const plain = await captureServed({ ...large, headers: plainHeaders }, context)
  const gzipped = await captureServed({ ...large, headers: gzipHeaders }, context)
  if (plain.status !== 200 || gzipped.status !== 200) {
    throw new Error(`${context}: the large request answered ${plain.status} uncompressed, ${gzipped.status} with gzip: ${(plain.status !== 200 ? plain : gzipped).body.subarray(0, 300).toString()}`)
  }
  let inflated: Buffer | undefined
  try {
    inflated = gunzipSync(gzipped.body)
  } catch {}
  const decompressesToUncompressed = inflated !== undefined && inflated.equals(plain.body)
  const answer: CompressionResult['answer'] = {
    uncompressedBytes: plain.body.length,
    uncompressedContentEncoding: header(plain.headers, 'content-encoding'),
    gzipBytes: gzipped.body.length,
    gzipContentEncoding: header(gzipped.headers, 'content-encoding'),
    gzipTransferEncoding: header(gzipped.headers, 'transfer-encoding'),
    gzipContentLength: header(gzipped.headers, 'content-length'),
    decompressesToUncompressed,
    correct: false
  }
  answer.correct = answer.uncompressedContentEncoding === undefined && answer.gzipContentEncoding === 'gzip' &&
    answer.gzipTransferEncoding === 'chunked' && answer.gzipContentLength === undefined && decompressesToUncompressed
  const events = countEvents(plain.body) ?? 0
  log(`${context}: ${events} events, ${plain.body.length} bytes uncompressed, ${gzipped.body.length} with gzip (${answer.gzipContentEncoding ?? 'no content-encoding'}, ` +
    `${answer.gzipTransferEncoding ?? 'not chunked'}); ${decompressesToUncompressed ? 'decompresses to the uncompressed answer' : 'does NOT decompress to the uncompressed answer'}`)
  const alone = [zlibAlone(plain.body, ZLIB_DEFAULT_LEVEL), zlibAlone(plain.body, 1)]
  log(`${context}: gzipSync of the answer here: ${alone.map((run) => `level ${run.level} ${run.ms.toFixed(0)} ms, ${run.bytes} bytes`).join('; ')}`)

  const contenders = [
    { label: 'uncompressed' as const, headers: plainHeaders },
    { label: 'gzip' as const, headers: gzipHeaders }
  ]
  const task = (headers: Record<string, string>, durationSec: number): ReadTask => ({ url: large.url, headers, connections: profile.large.connections, durationSec })
  const sampler = new RssSampler(provider.pid, profile.rssSampleMs)
  try {
    const baseline = (await sampler.reset()).startBytes
    if (profile.warmupSec > 0) {
      for (const contender of contenders) await readRound(task(contender.headers, profile.warmupSec), provider.pid)
    }
    const rounds: ReadRound[][] = contenders.map(() => [])
    const peaks = contenders.map(() => baseline)
    let end = baseline
    for (let round = 0; round < profile.rounds; round++) {
      for (const [index, contender] of contenders.entries()) {
        await sampler.reset()
        const read = await readRound(task(contender.headers, profile.large.durationSec), provider.pid)
        const reading = await sampler.read()
        peaks[index] = Math.max(peaks[index]!, reading.peakBytes)
        end = reading.lastBytes
        rounds[index]!.push(read)
        const rate = read.latenciesMs.length / read.durationSec
        log(`${context}: round ${round + 1}/${profile.rounds} ${contender.label}: ${rate.toFixed(1)} answers/s, ` +
          `p50 ${latencyOf(Float64Array.from(read.latenciesMs)).p50.toFixed(1)} ms, RSS peak ${(reading.peakBytes / MB).toFixed(0)} MB`)
      }
    }
    const uncompressed = summariseRuns('uncompressed', undefined, rounds[0]!, { peak: peaks[0]!, baseline })
    const gzip = summariseRuns('gzip', 'gzip', rounds[1]!, { peak: peaks[1]!, baseline })
    return {
      path: new URL(large.url).pathname + new URL(large.url).search,
      events,
      connections: profile.large.connections,
      durationSec: profile.large.durationSec,
      rounds: profile.rounds,
      warmupSec: profile.warmupSec,
      answer,
      zlibAlone: alone,
      uncompressed,
      gzip,
      ratios: {
        bytes: gzip.wireBytesPerAnswer / uncompressed.wireBytesPerAnswer,
        p50: gzip.latencyMs.p50 / uncompressed.latencyMs.p50,
        mean: gzip.latencyMs.mean / uncompressed.latencyMs.mean,
        answersPerSec: gzip.answersPerSec / uncompressed.answersPerSec
      },
      rssMB: { baseline: baseline / MB, end: end / MB }
    }
  } finally {
    await sampler.stop()
  }
}
