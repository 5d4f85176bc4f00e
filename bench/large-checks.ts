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
  /**
   * The same check on the framework ceiling serving the same small and large bytes (the large
   * answer written whole, as Fastify writes a buffer), in turns with the provider's rounds: how
   * much of the ratio this machine gives any server. Measured for the memory store only.
   */
  frameworkCeiling?: BesideLarge
}

/** Small requests alone and beside large ones, on one server. */
export interface BesideLarge {
  smallP99AloneMs: number
  smallP99UnderLoadMs: number
  p99Ratio: number
  largeBeside: BackgroundRun & { rounds: number }
}

/** The framework ceiling's requests for the check, serving the provider's small and large answers. */
export interface CeilingRequests {
  large: LoadRequest
  small: LoadRequest
}

/** How long the large requests run before the small ones are measured beside them. */
const LOAD_LEAD_MS = 500

export async function checkLarge (large: LoadRequest, small: LoadRequest, profile: Profile, context: string, ceiling?: CeilingRequests): Promise<LargeChecks> {
  const one = await capture(large)
  const transferEncoding = one.headers['transfer-encoding'] ?? null
  const events = countEvents(one.body)
  if (one.status !== 200 || events === undefined) throw new Error(`${context}: the large request answered ${one.status}: ${one.body.subarray(0, 200).toString()}`)

  const provider = new BesideLargeRounds(small, large, profile)
  const onCeiling = ceiling === undefined ? undefined : new BesideLargeRounds(ceiling.small, ceiling.large, profile)
  // Alternated like the ceilings: alone, under load, alone, under load..., the provider's round
  // then the ceiling's.
  for (let round = 0; round < profile.rounds; round++) {
    await provider.round()
    await onCeiling?.round()
    log(`${context}: round ${round + 1}/${profile.rounds} small p99 alone and beside ${profile.loadConnections} large connections measured${onCeiling === undefined ? '' : ' (and on the framework ceiling)'}`)
  }
  const smallAlone = summarise(provider.alone, 200)
  const smallUnderLoad = summarise(provider.underLoad, 200)
  return {
    streamed: transferEncoding === 'chunked' && one.headers['content-length'] === undefined,
    transferEncoding,
    eventsInOneResponse: events,
    bytesOfOneResponse: one.body.length,
    loadConnections: profile.loadConnections,
    smallAlone,
    smallUnderLoad,
    largeBeside: poolBackground(provider.beside),
    smallP99AloneMs: smallAlone.latencyMs.p99,
    smallP99UnderLoadMs: smallUnderLoad.latencyMs.p99,
    p99Ratio: smallUnderLoad.latencyMs.p99 / smallAlone.latencyMs.p99,
    ...(onCeiling === undefined ? {} : { frameworkCeiling: onCeiling.result() })
  }
}

/** One server's rounds: small requests alone, then beside large ones from a process of their own. */
class BesideLargeRounds {
  readonly alone: LoadSample[] = []
  readonly underLoad: LoadSample[] = []
  readonly beside: BackgroundRun[] = []
  readonly #small: LoadRequest
  readonly #large: LoadRequest
  readonly #profile: Profile

  constructor (small: LoadRequest, large: LoadRequest, profile: Profile) {
    this.#small = small
    this.#large = large
    this.#profile = profile
  }

  async round (): Promise<void> {
    const options = { connections: this.#profile.connections, durationSec: this.#profile.durationSec }
    this.alone.push(await runLoad(this.#small, options))
    // Outlasts the small requests' run (autocannon stops on whole seconds), then ends by itself.
    const load = await startBackground(this.#large, { connections: this.#profile.loadConnections, durationSec: this.#profile.durationSec + 2 }, 200)
    await sleep(LOAD_LEAD_MS)
    this.underLoad.push(await runLoad(this.#small, options))
    this.beside.push(await load.finished)
  }

  result (): BesideLarge {
    const alone = summarise(this.alone, 200).latencyMs.p99
    const underLoad = summarise(this.underLoad, 200).latencyMs.p99
    return { smallP99AloneMs: alone, smallP99UnderLoadMs: underLoad, p99Ratio: underLoad / alone, largeBeside: poolBackground(this.beside) }
  }
}
