import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { runLoad, type LoadRequest, type LoadSample } from './load.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import type { Provider } from './provider.js'
import { RssSampler } from './rss.js'
import { summarise, type Metrics } from './stats.js'

/** The attack of the hardening issue: connections that pipeline requests for a year of events and read nothing. */
export const ATTACK_CONNECTIONS = 10
export const ATTACK_REQUESTS_PER_CONNECTION = 500

/** How long the attack runs before the small requests are measured beside it. */
const ATTACK_LEAD_MS = 1000
const MB = 1024 * 1024

export interface PipeliningAttackResult {
  connections: number
  requestsPerConnection: number
  /** The pipelined request (a year of events). */
  path: string
  /** The provider's RSS over the rounds: before the first attack, the highest seen, and after the last one left. */
  rssMB: { start: number, peak: number, growth: number, end: number }
  smallAlone: Metrics
  smallBeside: Metrics
  /** smallBeside p99 / smallAlone p99. */
  p99Ratio: number
}

/** Connections that each write their requests at once and then never read; stopped by destroying them. */
async function startAttack (url: URL, path: string, authorization: string): Promise<() => void> {
  const request = `GET ${path} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: ${authorization}\r\n\r\n`
  const sockets: Socket[] = []
  await Promise.all(Array.from({ length: ATTACK_CONNECTIONS }, () => new Promise<void>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.pause()
      socket.write(request.repeat(ATTACK_REQUESTS_PER_CONNECTION))
      resolve()
    })
    socket.on('error', () => {})
    socket.once('error', reject)
    sockets.push(socket)
  })))
  return () => { for (const socket of sockets) socket.destroy() }
}

/**
 * The small requests alone, then beside the attack, in rounds; the provider's RSS throughout.
 * Targets (targets.ts): RSS growth under 200 MB, small p99 beside the attack under 3× alone.
 */
export async function measurePipeliningAttack (provider: Provider, small: LoadRequest, attackPath: string, authorization: string, profile: Profile): Promise<PipeliningAttackResult> {
  const options = { connections: profile.connections, durationSec: profile.durationSec }
  const url = new URL(provider.url)
  const sampler = new RssSampler(provider.pid, profile.rssSampleMs)
  const alone: LoadSample[] = []
  const beside: LoadSample[] = []
  try {
    const start = await sampler.reset()
    let peak = start.startBytes
    let end = start.startBytes
    for (let round = 0; round < profile.rounds; round++) {
      alone.push(await runLoad(small, options))
      const stop = await startAttack(url, attackPath, authorization)
      try {
        await sleep(ATTACK_LEAD_MS)
        beside.push(await runLoad(small, options))
      } finally {
        stop()
      }
      await sleep(ATTACK_LEAD_MS)
      const reading = await sampler.read()
      peak = Math.max(peak, reading.peakBytes)
      end = reading.lastBytes
      log(`pipelined attack: round ${round + 1}/${profile.rounds}: small p99 alone and beside ${ATTACK_CONNECTIONS} × ${ATTACK_REQUESTS_PER_CONNECTION} unread pipelined requests measured; RSS peak ${(peak / MB).toFixed(0)} MB`)
    }
    const smallAlone = summarise(alone, 200)
    const smallBeside = summarise(beside, 200)
    return {
      connections: ATTACK_CONNECTIONS,
      requestsPerConnection: ATTACK_REQUESTS_PER_CONNECTION,
      path: attackPath,
      rssMB: { start: start.startBytes / MB, peak: peak / MB, growth: (peak - start.startBytes) / MB, end: end / MB },
      smallAlone,
      smallBeside,
      p99Ratio: smallBeside.latencyMs.p99 / smallAlone.latencyMs.p99
    }
  } finally {
    await sampler.stop()
  }
}
