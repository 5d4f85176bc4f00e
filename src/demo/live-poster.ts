import { setTimeout as sleep } from 'node:timers/promises'
import type { Message } from '../../schemas/message.js'
import type { EventSource } from './live-events.js'

/** What the run did so far, for the status line. */
export interface PosterStats {
  /** Events the provider answered 200 for. */
  sent: number
  written: number
  unchanged: number
  refused: number
  /** Attempts that failed and are tried again: 5xx, 408, 429, a network error, a timeout. */
  errors: number
  /** The last answer's HTTP status, `network error` or `timeout`; undefined before the first attempt. */
  lastStatus: number | 'network error' | 'timeout' | undefined
  /** Events taken from the source and not answered 200 yet. */
  pending: number
}

export interface PosterOptions {
  /** The provider's POST /ingest/events. */
  endpoint: URL
  token: string
  source: EventSource
  /** Aborting it stops the run: a request on its way is finished, a wait is cut short. */
  signal: AbortSignal
  /** The clock; a monotonic one keeps event times in order when the system clock is adjusted. */
  now?: () => number
  /** Events due are collected and posted together this often. */
  tickMs?: number
  firstRetryMs?: number
  maxRetryMs?: number
  requestTimeoutMs?: number
  /** Most events in one request; a 413 halves it. */
  maxBatch?: number
  /** After every attempt. */
  onAttempt?: (stats: Readonly<PosterStats>) => void
  /** Something a person should read: why lines were refused, why the run waits. */
  onNotice?: (text: string) => void
}

export interface PosterResult {
  stats: PosterStats
  /** Why the run gave up (a refused token, no ingest endpoint); undefined when it was stopped. */
  fatal?: string
}

export const DEFAULT_TICK_MS = 200
export const DEFAULT_MAX_RETRY_MS = 5000
const DEFAULT_FIRST_RETRY_MS = 250
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000
const DEFAULT_MAX_BATCH = 1000
/** Distinct refusal reasons told one by one; further ones are only counted. */
const TOLD_REASONS = 5

type Outcome =
  | { kind: 'ok', written: number, unchanged: number, refused: { line: number, reason: string }[] }
  | { kind: 'retry', afterMs: number, why: string }
  | { kind: 'smaller' }
  | { kind: 'fatal', why: string }

/**
 * Posts the source's events as they fall due, in NDJSON batches, until options.signal is aborted
 * or the provider refuses the token. A batch that fails (503, network error, …) is sent again,
 * unchanged, after a wait that doubles up to maxRetryMs (longer when Retry-After asks, up to the
 * same bound); meanwhile nothing new is taken, so the source pauses rather than piling up.
 */
export async function runPoster (options: PosterOptions): Promise<PosterResult> {
  const now = options.now ?? Date.now
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS
  const firstRetryMs = options.firstRetryMs ?? DEFAULT_FIRST_RETRY_MS
  const maxRetryMs = options.maxRetryMs ?? DEFAULT_MAX_RETRY_MS
  const { signal, source } = options
  const stats: PosterStats = { sent: 0, written: 0, unchanged: 0, refused: 0, errors: 0, lastStatus: undefined, pending: 0 }
  const toldReasons = new Set<string>()
  let maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH
  let queue: Message[] = []
  let batch: Message[] | undefined
  let retryMs = firstRetryMs
  let failing = false
  let nextTick = now()

  while (!signal.aborted) {
    if (batch === undefined) {
      if (queue.length < maxBatch) queue = queue.concat(source.take(now()))
      if (queue.length === 0) {
        nextTick = Math.max(nextTick + tickMs, now())
        await pause(nextTick - now(), signal)
        continue
      }
      batch = queue.slice(0, maxBatch)
      queue = queue.slice(batch.length)
    }
    stats.pending = queue.length + batch.length

    const outcome = await post(options, batch, stats, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS)
    switch (outcome.kind) {
      case 'ok':
        stats.sent += batch.length
        stats.written += outcome.written
        stats.unchanged += outcome.unchanged
        stats.refused += outcome.refused.length
        for (const { line, reason } of outcome.refused) {
          if (toldReasons.size >= TOLD_REASONS || toldReasons.has(reason)) continue
          toldReasons.add(reason)
          options.onNotice?.(`refused: ${reason} (${JSON.stringify(batch[line - 1] ?? null)})`)
        }
        if (failing) options.onNotice?.('the provider takes events again')
        failing = false
        batch = undefined
        retryMs = firstRetryMs
        stats.pending = queue.length
        options.onAttempt?.(stats)
        if (queue.length === 0) {
          nextTick = Math.max(nextTick + tickMs, now())
          await pause(nextTick - now(), signal)
        }
        break
      case 'smaller':
        if (batch.length === 1) return { stats, fatal: 'the provider refuses even a single event as too large (HTTP 413)' }
        // Put the batch back and send it in halves.
        maxBatch = Math.ceil(batch.length / 2)
        queue = batch.concat(queue)
        batch = undefined
        options.onNotice?.(`HTTP 413: the provider takes at most ${maxBatch} events a request from now on`)
        break
      case 'retry': {
        stats.errors++
        options.onAttempt?.(stats)
        const waitMs = Math.min(maxRetryMs, Math.max(retryMs, outcome.afterMs))
        if (!failing) options.onNotice?.(`${outcome.why}: sending the ${batch.length} events again, waiting up to ${maxRetryMs / 1000} s between attempts`)
        failing = true
        retryMs = Math.min(maxRetryMs, retryMs * 2)
        await pause(waitMs, signal)
        break
      }
      case 'fatal':
        options.onAttempt?.(stats)
        return { stats, fatal: outcome.why }
    }
  }
  return { stats }
}

async function post (options: PosterOptions, batch: readonly Message[], stats: PosterStats, timeoutMs: number): Promise<Outcome> {
  const body = batch.map((message) => JSON.stringify(message)).join('\n') + '\n'
  let response: Response
  let text: string
  try {
    response = await fetch(options.endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/x-ndjson' },
      body,
      signal: AbortSignal.timeout(timeoutMs)
    })
    text = await response.text()
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError'
    stats.lastStatus = timedOut ? 'timeout' : 'network error'
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message
    return { kind: 'retry', afterMs: 0, why: timedOut ? `no answer from ${options.endpoint.href} within ${timeoutMs / 1000} s` : `cannot reach ${options.endpoint.href} (${cause})` }
  }
  const status = response.status
  stats.lastStatus = status
  if (status === 200) {
    const answer = parseAnswer(text)
    if (answer !== undefined) return answer
    return { kind: 'fatal', why: `the provider answered 200 with a body that is not an ingest answer: ${excerpt(text)}` }
  }
  if (status === 401 || status === 403) {
    return { kind: 'fatal', why: `the provider refused the token (HTTP ${status}${errorCode(text)}): --token must be one of the provider's INGEST_TOKENS` }
  }
  if (status === 404 || status === 405) {
    return { kind: 'fatal', why: `no ingest endpoint at POST ${options.endpoint.href} (HTTP ${status}): is --url the provider's base URL, and is the provider recent enough to take events?` }
  }
  if (status === 413) return { kind: 'smaller' }
  if (status >= 500 || status === 408 || status === 429) {
    return { kind: 'retry', afterMs: retryAfterMs(response.headers.get('retry-after')), why: `HTTP ${status}${errorCode(text)}` }
  }
  // 400, 415, 422…: the same bytes would be refused again; a simulator that sends them has a bug.
  return { kind: 'fatal', why: `the provider refused the request (HTTP ${status}): ${excerpt(text)}` }
}

function parseAnswer (text: string): Extract<Outcome, { kind: 'ok' }> | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { written, unchanged, refused } = value as Record<string, unknown>
  if (typeof written !== 'number' || typeof unchanged !== 'number' || !Array.isArray(refused)) return undefined
  return {
    kind: 'ok',
    written,
    unchanged,
    refused: refused.map((item: unknown) => {
      const { line, reason } = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>
      return { line: typeof line === 'number' ? line : 0, reason: typeof reason === 'string' ? reason : JSON.stringify(item) }
    })
  }
}

/** `: <message>` of the provider's error body `{ "status", "message" }`, or nothing. */
function errorCode (text: string): string {
  try {
    const { message } = JSON.parse(text) as { message?: unknown }
    return typeof message === 'string' ? ` ${message}` : ''
  } catch {
    return ''
  }
}

function excerpt (text: string): string {
  return text.length > 300 ? text.slice(0, 300) + '…' : text
}

/** Retry-After in seconds or as an HTTP date; 0 when absent or unreadable. */
export function retryAfterMs (header: string | null, nowMs = Date.now()): number {
  if (header === null) return 0
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000
  const date = Date.parse(header)
  return Number.isNaN(date) ? 0 : Math.max(0, date - nowMs)
}

/** Waits, or less when the signal is aborted; never throws. */
async function pause (ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return
  await sleep(ms, undefined, { signal }).catch(() => {})
}
