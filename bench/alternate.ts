import { runLoad, type LoadOptions, type LoadRequest, type LoadSample } from './load.js'
import { log } from './log.js'
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
 */
export async function alternate (contenders: readonly Contender[], profile: Profile, context: string, options: LoadOptions = { connections: profile.connections, durationSec: profile.durationSec }): Promise<LoadSample[][]> {
  if (profile.warmupSec > 0) {
    for (const contender of contenders) await runLoad(contender.request, { ...options, durationSec: profile.warmupSec })
  }
  const samples: LoadSample[][] = contenders.map(() => [])
  for (let round = 0; round < profile.rounds; round++) {
    for (const [index, contender] of contenders.entries()) {
      const sample = await runLoad(contender.request, options)
      samples[index]!.push(sample)
      const rate = Object.values(sample.statuses).reduce((sum, n) => sum + n, 0) / sample.durationSec
      log(`${context}: round ${round + 1}/${profile.rounds} ${contender.label}: ${rate.toFixed(rate < 10 ? 1 : 0)} req/s`)
    }
  }
  return samples
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
