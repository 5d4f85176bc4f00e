import { Agent, request as httpRequest } from 'node:http'
import type { Socket } from 'node:net'

/** Requests kept in flight, each answer read to its end with node:http (a native parser). */
export interface ClosedLoopTask {
  url: string
  headers: Record<string, string>
  connections: number
  durationSec: number
  /** A request without its whole answer after this long is abandoned and counted as a timeout. */
  timeoutSec: number
}

/** What every answer counted adds up to. */
export interface ClosedLoopCounts {
  durationSec: number
  /** Of the answers read to the end, in milliseconds from sending the request. */
  latenciesMs: number[]
  statuses: Record<string, number>
  /** Requests that failed, timeouts included. */
  errors: number
  timeouts: number
  /** The bodies as received, and everything read from the sockets for them (status line, headers, framing). */
  bodyBytes: number
  wireBytes: number
}

export interface ClosedLoopHooks {
  /** Once every connection's first request is out. */
  onRunning?: () => void
  /** At the deadline, before the answers still being read are abandoned (to sample CPU time, say). */
  onDeadline?: () => void
}

/**
 * Keeps task.connections requests in flight for task.durationSec, each on a kept-alive
 * connection, the next sent once the last answer is read. Answers still being read at the
 * deadline are abandoned and not counted, as autocannon does.
 */
export async function runClosedLoop (task: ClosedLoopTask, hooks: ClosedLoopHooks = {}): Promise<ClosedLoopCounts> {
  const agent = new Agent({ keepAlive: true, maxSockets: task.connections })
  const counts: ClosedLoopCounts = { durationSec: 0, latenciesMs: [], statuses: {}, errors: 0, timeouts: 0, bodyBytes: 0, wireBytes: 0 }
  const started = performance.now()
  const deadline = started + task.durationSec * 1000
  let stopping = false

  // One request; whatever happens to it, it settles (never rejects), and stops counting once the run is over.
  const once = async () => new Promise<void>((resolve) => {
    const sent = performance.now()
    let timedOut = false
    let socket: Socket | undefined
    let socketReadBefore = 0
    const outgoing = httpRequest(task.url, { agent, headers: task.headers }, (response) => {
      let body = 0
      response.on('data', (chunk: Buffer) => { body += chunk.length })
      response.on('end', () => {
        if (!stopping) {
          counts.latenciesMs.push(performance.now() - sent)
          counts.bodyBytes += body
          // One request at a time on a connection: what it read since this request got it is this answer.
          counts.wireBytes += (socket?.bytesRead ?? 0) - socketReadBefore
          const status = String(response.statusCode ?? 0)
          counts.statuses[status] = (counts.statuses[status] ?? 0) + 1
        }
        resolve()
      })
      response.on('error', () => {})
    })
    outgoing.on('socket', (assigned: Socket) => {
      socket = assigned
      socketReadBefore = assigned.bytesRead
    })
    outgoing.setTimeout(task.timeoutSec * 1000, () => {
      timedOut = true
      outgoing.destroy(new Error('timed out'))
    })
    outgoing.on('error', () => {
      if (!stopping) {
        counts.errors++
        if (timedOut) counts.timeouts++
      }
      resolve()
    })
    outgoing.on('close', () => resolve())
    outgoing.end()
  })

  const loop = async () => {
    // stopping is set by the deadline below, while the loop awaits.
    while (performance.now() < deadline) {
      await once()
      if (stopping) break
    }
  }
  const loops = Array.from({ length: task.connections }, loop)
  hooks.onRunning?.()
  // Timers may fire a fraction of a millisecond early: wait until the deadline has really passed.
  while (performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, Math.max(1, deadline - performance.now())))
  stopping = true
  counts.durationSec = (performance.now() - started) / 1000
  hooks.onDeadline?.()
  agent.destroy()
  await Promise.all(loops)
  return counts
}
