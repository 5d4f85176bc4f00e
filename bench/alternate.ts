import { runLoad, type LoadOptions, type LoadRequest, type LoadSample } from './load.js'
import { log } from './log.js'
import { cpuTimes, stealPercentBetween } from './machine.js'
import type { Profile } from './options.js'

/** Something measured in turns with others: the provider, or one of its ceilings. */
export interface Contender {
  label: string
  request: LoadRequest
}

/**
 * Warms every contender up once (unrecorded), then measures them in turns, round after round
 * (provider, ceiling, provider, ceiling, ...), so a drift of the machine hits each of them alike.
 * Returns each contender's samples, one per round, in the order given.
 *
 * With `sliceSec`, each round is measured in slices of that many seconds, the contenders' slices
 * in turns (provider 1 s, ceiling 1 s, ceiling 1 s, provider 1 s, ...), and each contender's
 * slices of a round make its sample of that round. This machine's host slows it for seconds at
 * a time: the framework ceiling alone, in 1-s windows (2026-12-01), answered 41,000–47,000 small
 * requests a second for 20 s, then 5,500–16,000 for the next 12; measured in rounds of 5 s, such
 * a slowdown fell on one contender's round (the ceiling's rejected rounds of one run: 30,676,
 * 13,747 and 41,815 a second), and the ratio measured the host. In slices it falls on both
 * alike. For answers of a few milliseconds at most: a slice's answers still in flight at its end
 * are not counted.
 */
export async function alternate (contenders: readonly Contender[], profile: Profile, context: string, options: LoadOptions = { connections: profile.connections, durationSec: profile.durationSec }, sliceSec?: number): Promise<LoadSample[][]> {
  if (profile.warmupSec > 0) {
    for (const contender of contenders) await runLoad(contender.request, { ...options, durationSec: profile.warmupSec })
  }
  const slices = sliceSec === undefined || sliceSec >= options.durationSec ? 1 : Math.ceil(options.durationSec / sliceSec)
  const sliceOptions = slices === 1 ? options : { ...options, durationSec: sliceSec! }
  const samples: LoadSample[][] = contenders.map(() => [])
  for (let round = 0; round < profile.rounds; round++) {
    const parts: LoadSample[][] = contenders.map(() => [])
    const before = cpuTimes()
    for (let slice = 0; slice < slices; slice++) {
      // Every other slice in the reverse order (provider, ceiling, ceiling, provider, ...), so
      // that neither contender always runs right after the other (in the wake of its garbage and
      // its closing connections).
      const order = slice % 2 === 0 ? contenders.map((_, index) => index) : contenders.map((_, index) => contenders.length - 1 - index)
      for (const index of order) parts[index]!.push(await runLoad(contenders[index]!.request, sliceOptions))
    }
    const steal = stealPercentBetween(before, cpuTimes())
    for (const [index, contender] of contenders.entries()) {
      const sample = joinSamples(parts[index]!)
      samples[index]!.push(sample)
      const rate = Object.values(sample.statuses).reduce((sum, n) => sum + n, 0) / sample.durationSec
      log(`${context}: round ${round + 1}/${profile.rounds} ${contender.label}: ${rate.toFixed(rate < 10 ? 1 : 0)} req/s${steal === undefined ? '' : ` (the host's steal over the round: ${steal}%)`}`)
    }
  }
  return samples
}

/** Samples of one contender as one: their latencies, statuses, times and counts together. */
export function joinSamples (parts: readonly LoadSample[]): LoadSample {
  if (parts.length === 1) return parts[0]!
  const latenciesMs = new Float64Array(parts.reduce((sum, part) => sum + part.latenciesMs.length, 0))
  let at = 0
  const statuses: Record<string, number> = {}
  for (const part of parts) {
    latenciesMs.set(part.latenciesMs, at)
    at += part.latenciesMs.length
    for (const [status, count] of Object.entries(part.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  }
  const sum = (key: 'durationSec' | 'errors' | 'timeouts' | 'bytes') => parts.reduce((total, part) => total + part[key], 0)
  return { durationSec: sum('durationSec'), latenciesMs, statuses, errors: sum('errors'), timeouts: sum('timeouts'), bytes: sum('bytes') }
}

/**
 * Loads a provider just started with `request` (unrecorded) for profile.freshProviderWarmupSec,
 * so that its first scenario's rounds find it compiled as its later ones do (options.ts).
 */
export async function warmUpFreshProvider (request: LoadRequest, profile: Profile, label: string): Promise<void> {
  if (profile.freshProviderWarmupSec <= 0) return
  log(`${label}: warming the provider up (${profile.freshProviderWarmupSec} s of the small request)`)
  await runLoad(request, { connections: profile.connections, durationSec: profile.freshProviderWarmupSec })
}
