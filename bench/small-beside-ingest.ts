import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startPoster } from './ingest-poster.js'
import type { OpenLoopRun } from './ingest-load.js'
import type { LiveEventSource } from './live-events.js'
import { runLoad, type LoadRequest, type LoadSample } from './load.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import type { Provider } from './provider.js'
import { summarise, latencyOf, type Metrics } from './stats.js'

/** How long the ingest runs before the small requests are measured beside it, and after. */
const LEAD_MS = 500
const TAIL_MS = 1000

export interface SmallBesideIngestResult {
  /** The background ingest: events per second, per POST. */
  ratePerSec: number
  perPost: number
  smallAlone: Metrics
  smallBeside: Metrics
  /** smallBeside p99 / smallAlone p99. */
  p99Ratio: number
  /** The ingest's posts over every round. */
  ingest: {
    posts: number
    events: number
    /** Events written per second while it ran. */
    eventsPerSec: number
    postLatencyMs: { p50: number, p99: number, max: number }
    statuses: Record<string, number>
    unexpectedStatuses: number
    errors: number
    refused: number
    maxLagMs: number
  }
}

/**
 * The small scenario's request alone, then beside an ingest at a fixed rate (a process of its
 * own posting new events), in rounds, on the same memory-store provider. Each round's events are
 * new (made before the round, from `firstIndex` on); returns the index after the last one used.
 */
export async function measureSmallBesideIngest (provider: Provider, small: LoadRequest, ingestToken: string, source: LiveEventSource, firstIndex: number, profile: Profile, scratch: string): Promise<{ result: SmallBesideIngestResult, nextIndex: number }> {
  const { besideRate: rate, besidePerPost: perPost } = profile.live
  const intervalMs = 1000 * perPost / rate
  const options = { connections: profile.connections, durationSec: profile.durationSec }
  const posts = Math.ceil((LEAD_MS + profile.durationSec * 1000 + TAIL_MS) / intervalMs)
  const eventsFile = join(scratch, 'beside-ingest-events.ndjson')
  let next = firstIndex
  const alone: LoadSample[] = []
  const beside: LoadSample[] = []
  const ingests: OpenLoopRun[] = []
  log(`small/memory beside an ingest: ${rate} events/s (${perPost} per POST every ${intervalMs} ms), in turns with the small requests alone`)
  if (profile.warmupSec > 0) await runLoad(small, { ...options, durationSec: profile.warmupSec })
  try {
    for (let round = 0; round < profile.rounds; round++) {
      alone.push(await runLoad(small, options))
      await writeFile(eventsFile, source.ndjson(next, posts * perPost))
      next += posts * perPost
      const poster = await startPoster({ url: provider.url, ingestToken, eventsFile, perPost, intervalMs })
      await sleep(LEAD_MS)
      beside.push(await runLoad(small, options))
      const ingest = await poster.finished
      ingests.push(ingest)
      log(`small/memory beside an ingest: round ${round + 1}/${profile.rounds}: small p99 alone ${latencyOf(alone.at(-1)!.latenciesMs).p99.toFixed(2)} ms, ` +
        `beside ${latencyOf(beside.at(-1)!.latenciesMs).p99.toFixed(2)} ms; ${ingest.events} events written in ${ingest.posts} posts`)
    }
  } finally {
    await rm(eventsFile, { force: true })
  }
  const smallAlone = summarise(alone, 200)
  const smallBeside = summarise(beside, 200)
  const postLatency = latencyOf(Float64Array.from(ingests.flatMap((run) => run.latenciesMs)))
  const statuses: Record<string, number> = {}
  for (const run of ingests) for (const [status, count] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  const durationSec = ingests.reduce((sum, run) => sum + run.durationSec, 0)
  const events = ingests.reduce((sum, run) => sum + run.events, 0)
  return {
    nextIndex: next,
    result: {
      ratePerSec: rate,
      perPost,
      smallAlone,
      smallBeside,
      p99Ratio: smallBeside.latencyMs.p99 / smallAlone.latencyMs.p99,
      ingest: {
        posts: ingests.reduce((sum, run) => sum + run.posts, 0),
        events,
        eventsPerSec: durationSec > 0 ? events / durationSec : 0,
        postLatencyMs: { p50: postLatency.p50, p99: postLatency.p99, max: postLatency.max },
        statuses,
        unexpectedStatuses: ingests.reduce((sum, run) => sum + run.unexpectedStatuses, 0),
        errors: ingests.reduce((sum, run) => sum + run.errors, 0),
        refused: ingests.reduce((sum, run) => sum + run.refused, 0),
        maxLagMs: Math.max(...ingests.map((run) => run.maxLagMs))
      }
    }
  }
}
