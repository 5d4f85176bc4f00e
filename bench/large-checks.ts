import { setTimeout as sleep } from 'node:timers/promises'
import { capture, countEvents } from './capture.js'
import { poolBackground, startBackground, type BackgroundRun } from './background-load.js'
import { runLoad, type LoadRequest, type LoadSample } from './load.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import { summarise, type Metrics } from './stats.js'

/** What only the large scenario checks: that it streams, and what it does to small requests beside it. */
export interface LargeChecks {
  /** transfer-encoding: chunked, and no content-length. */
  streamed: boolean
  transferEncoding: string | null
  eventsInOneResponse: number
  bytesOfOneResponse: number
  loadConnections: number
  smallAlone: Metrics
  smallUnderLoad: Metrics
  /** The large requests that ran beside the small ones (from a process of their own: bench/large-reader.ts). */
  largeBeside: BackgroundRun & { rounds: number }
  smallP99AloneMs: number
  smallP99UnderLoadMs: number
  /** smallP99UnderLoadMs / smallP99AloneMs. */
  p99Ratio: number
}

/** How long the large requests run before the small ones are measured beside them. */
const LOAD_LEAD_MS = 500

export async function checkLarge (large: LoadRequest, small: LoadRequest, profile: Profile, context: string): Promise<LargeChecks> {
  const one = await capture(large)
  const transferEncoding = one.headers['transfer-encoding'] ?? null
  const events = countEvents(one.body)
  if (one.status !== 200 || events === undefined) throw new Error(`${context}: the large request answered ${one.status}: ${one.body.subarray(0, 200).toString()}`)

  const options = { connections: profile.connections, durationSec: profile.durationSec }
  const alone: LoadSample[] = []
  const underLoad: LoadSample[] = []
  const beside: BackgroundRun[] = []
  // Alternated like the ceilings: alone, under load, alone, under load...
  for (let round = 0; round < profile.rounds; round++) {
    alone.push(await runLoad(small, options))
    // Outlasts the small requests' run (autocannon stops on whole seconds), then ends by itself.
    const load = await startBackground(large, { connections: profile.loadConnections, durationSec: profile.durationSec + 2 }, 200)
    await sleep(LOAD_LEAD_MS)
    underLoad.push(await runLoad(small, options))
    beside.push(await load.finished)
    log(`${context}: round ${round + 1}/${profile.rounds} small p99 alone and beside ${profile.loadConnections} large connections measured`)
  }
  const smallAlone = summarise(alone, 200)
  const smallUnderLoad = summarise(underLoad, 200)
  return {
    streamed: transferEncoding === 'chunked' && one.headers['content-length'] === undefined,
    transferEncoding,
    eventsInOneResponse: events,
    bytesOfOneResponse: one.body.length,
    loadConnections: profile.loadConnections,
    smallAlone,
    smallUnderLoad,
    largeBeside: poolBackground(beside),
    smallP99AloneMs: smallAlone.latencyMs.p99,
    smallP99UnderLoadMs: smallUnderLoad.latencyMs.p99,
    p99Ratio: smallUnderLoad.latencyMs.p99 / smallAlone.latencyMs.p99
  }
}
