import { Agent, request as httpRequest } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { NDJSON_CONTENT_TYPE } from '../schemas/ingest.js'

/** One answer, its body as text. */
export interface PostAnswer {
  status: number
  body: string
}

/** A keep-alive agent for posting: one socket per client. */
export function postAgent (sockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: sockets })
}

/**
 * POSTs a body and reads the whole answer. `onResponse` is called as the status arrives. Bodies
 * are made into bytes before the clock starts (a string of 220 kB was encoded again by node:http
 * for every post: about 0.7 µs of the benchmark's CPU per event posted, taken from the provider
 * on these 2 shared cores, against 0.35 µs for the bytes).
 */
export async function post (agent: Agent, url: string, headers: Record<string, string>, body: Buffer, onResponse?: () => void): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, {
      method: 'POST',
      agent,
      headers: { ...headers, 'content-length': String(body.length) },
      signal: AbortSignal.timeout(60_000)
    }, (response) => {
      onResponse?.()
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('error', reject)
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
    })
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

/** The headers of a POST to /ingest/events. */
export function ingestHeaders (ingestToken: string): Record<string, string> {
  return { 'content-type': NDJSON_CONTENT_TYPE, authorization: `Bearer ${ingestToken}` }
}

/** What one batch came to. */
export interface BatchOutcome {
  status: number
  /** Whether the status was the one expected. */
  ok: boolean
  /** Events the target took: written (provider), or every one (a ceiling). */
  events: number
  /** Events the provider refused, or found already stored. */
  refused: number
  unchanged: number
}

/** The provider's answer to a batch of `count` events. */
export function ingestOutcome (answer: PostAnswer): BatchOutcome {
  if (answer.status !== 200) return { status: answer.status, ok: false, events: 0, refused: 0, unchanged: 0 }
  const parsed = JSON.parse(answer.body) as { written: number, unchanged: number, refused: unknown[] }
  return { status: 200, ok: true, events: parsed.written, refused: parsed.refused.length, unchanged: parsed.unchanged }
}

/** Clients posting batches in a loop for a while: what they got. */
export interface ClosedLoopRun {
  /** From the first batch sent to the last answer (those in flight at the deadline are waited for). */
  durationSec: number
  batches: number
  events: number
  /** Per batch, from sending it to its whole answer. */
  latenciesMs: number[]
  statuses: Record<string, number>
  /** Batches whose status was not the expected one. */
  unexpectedStatuses: number
  /** Requests that failed (connection errors, timeouts). */
  errors: number
  refused: number
  unchanged: number
  /** The batches made for the run ran out before its end (it ended early). */
  exhausted: boolean
}

/**
 * `clients` loops, each sending batch after batch (send(i), i = 0, 1, ... shared among them)
 * and waiting for each answer before the next, until durationSec has passed or the batches
 * (count) run out. The batches are made before: send only sends.
 */
export async function runClosedLoop (count: number, send: (index: number) => Promise<BatchOutcome>, clients: number, durationSec: number): Promise<ClosedLoopRun> {
  const run: ClosedLoopRun = { durationSec: 0, batches: 0, events: 0, latenciesMs: [], statuses: {}, unexpectedStatuses: 0, errors: 0, refused: 0, unchanged: 0, exhausted: false }
  let next = 0
  const started = performance.now()
  const deadline = started + durationSec * 1000
  const client = async () => {
    while (performance.now() < deadline) {
      if (next >= count) {
        run.exhausted = true
        return
      }
      const index = next++
      const sent = performance.now()
      let outcome: BatchOutcome
      try {
        outcome = await send(index)
      } catch {
        run.errors++
        // A target that refuses connections must not turn the loop into a busy one.
        await sleep(10)
        continue
      }
      run.latenciesMs.push(performance.now() - sent)
      run.batches++
      run.statuses[outcome.status] = (run.statuses[outcome.status] ?? 0) + 1
      if (!outcome.ok) run.unexpectedStatuses++
      run.events += outcome.events
      run.refused += outcome.refused
      run.unchanged += outcome.unchanged
    }
  }
  await Promise.all(Array.from({ length: clients }, client))
  run.durationSec = (performance.now() - started) / 1000
  return run
}

/** Batches posted on a schedule: what they got. */
export interface OpenLoopRun {
  /** From the first batch sent to the last answer. */
  durationSec: number
  posts: number
  events: number
  /** Per post, on the caller's clock: when it was sent, and when its status arrived (NaN: no answer). */
  sentAt: number[]
  answeredAt: number[]
  /** Per post, from sending it to its whole answer (answered posts only). */
  latenciesMs: number[]
  statuses: Record<string, number>
  unexpectedStatuses: number
  errors: number
  refused: number
  unchanged: number
  /** The latest a post was sent after its time in the schedule. */
  maxLagMs: number
}

/**
 * Sends post i at intervalMs × i after the start, whether the ones before are answered or not
 * (a client with events to deliver at a rate), for i = 0 … count - 1, then waits for every answer.
 * `clock` is what sentAt and answeredAt are read on.
 */
export async function runOpenLoop (count: number, send: (index: number, onResponse: () => void) => Promise<BatchOutcome>, intervalMs: number, clock: () => number = () => performance.now()): Promise<OpenLoopRun> {
  const run: OpenLoopRun = {
    durationSec: 0,
    posts: 0,
    events: 0,
    sentAt: new Array<number>(count).fill(NaN),
    answeredAt: new Array<number>(count).fill(NaN),
    latenciesMs: [],
    statuses: {},
    unexpectedStatuses: 0,
    errors: 0,
    refused: 0,
    unchanged: 0,
    maxLagMs: 0
  }
  const started = performance.now()
  const pending: Array<Promise<void>> = []
  for (let index = 0; index < count; index++) {
    const due = started + index * intervalMs
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    run.maxLagMs = Math.max(run.maxLagMs, performance.now() - due)
    const sent = performance.now()
    run.sentAt[index] = clock()
    pending.push(send(index, () => { run.answeredAt[index] = clock() }).then((outcome) => {
      run.latenciesMs.push(performance.now() - sent)
      run.posts++
      run.statuses[outcome.status] = (run.statuses[outcome.status] ?? 0) + 1
      if (!outcome.ok) run.unexpectedStatuses++
      run.events += outcome.events
      run.refused += outcome.refused
      run.unchanged += outcome.unchanged
    }, () => {
      run.errors++
      run.answeredAt[index] = NaN
    }))
  }
  await Promise.all(pending)
  run.durationSec = (performance.now() - started) / 1000
  return run
}
