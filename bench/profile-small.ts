import { copyFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { topSelfTime, type HotFunction } from './cpu-profile.js'
import type { Dataset } from './dataset.js'
import { runLoad } from './load.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import { startProvider } from './provider.js'
import { providerRequest, type Scenario } from './scenarios.js'

export interface SmallProfile {
  /** The .cpuprofile's name in the results folder (open it in Chrome DevTools). */
  file: string
  durationSec: number
  reqPerSec: number
  top: HotFunction[]
}

export const PROFILE_FILE = 'small-memory.cpuprofile'

/** A memory-store provider of its own, run with --cpu-prof, under the small scenario's load only. */
export async function profileSmall (dataset: Dataset, token: string, small: Scenario, profile: Profile, scratchDir: string, resultsDir: string): Promise<SmallProfile> {
  const profileDir = join(scratchDir, 'cpu-profile')
  const provider = await startProvider({ name: 'memory, --cpu-prof', dataset, token, store: 'memory', nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] })
  const durationSec = profile.durationSec * profile.rounds
  let sample
  try {
    const request = providerRequest(small, provider.url, token)
    if (profile.warmupSec > 0) await runLoad(request, { connections: profile.connections, durationSec: profile.warmupSec })
    log(`cpu profile: small/memory for ${durationSec} s`)
    sample = await runLoad(request, { connections: profile.connections, durationSec })
  } finally {
    // The profile is written when the provider exits.
    await provider.stop()
  }
  // One file per thread (tsx's module hooks run on one of their own): CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile, main thread 0.
  const main = (await readdir(profileDir)).filter((name) => /\.0\.\d+\.cpuprofile$/.test(name))
  if (main.length !== 1) throw new Error(`expected one main-thread .cpuprofile, found ${main.length}`)
  await copyFile(join(profileDir, main[0]!), join(resultsDir, PROFILE_FILE))
  const requests = Object.values(sample.statuses).reduce((sum, n) => sum + n, 0)
  return {
    file: PROFILE_FILE,
    durationSec,
    reqPerSec: requests / sample.durationSec,
    top: await topSelfTime(join(profileDir, main[0]!), sample.durationSec * 1000)
  }
}
