import type { InfluxQLSettings } from '../../config.js'
import { StoreUnavailableError, type EventQuery } from '../event-store.js'
import { messageOf, parseStoredTime, type StoredPointValues } from './event-point.js'
import type { ExistingPoint, InfluxBackend } from './influx-backend.js'
import { buildInfluxQLEventQuery, buildInfluxQLPointsQuery, influxqlIdentifier } from './influxql-query.js'
import type { TimedMessage } from './ordered-batches.js'

const CHUNK_SIZE = 10_000

interface Series {
  columns: string[]
  values: unknown[][]
}

interface QueryChunk {
  error?: string
  results?: Array<{ error?: string, series?: Series[] }>
}

/** A query failed at InfluxDB's end: the provider answers 503 and logs the cause. */
function unavailable (message: string, cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError(message, cause === undefined ? undefined : { cause })
}

/**
 * InfluxQL over the 1.x HTTP API (/query, /write, /ping), which InfluxDB 1.x, 2.x (v1
 * compatibility) and 3.x all serve. Results are read chunked, so a large answer streams.
 */
export class InfluxQLBackend implements InfluxBackend {
  readonly dialect = 'influxql'
  readonly #settings: InfluxQLSettings
  readonly #headers: Record<string, string> = {}

  constructor (settings: InfluxQLSettings) {
    this.#settings = settings
    if (settings.token !== undefined) this.#headers.authorization = `Token ${settings.token}`
    if (settings.username !== undefined) {
      this.#headers.authorization = 'Basic ' + Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')
    }
  }

  async * queryEvents (query: EventQuery): AsyncGenerator<TimedMessage[]> {
    const statement = buildInfluxQLEventQuery(this.#settings.measurement, query)
    // epoch=ms is the cheapest form to read, but InfluxDB truncates it toward zero, which is a
    // millisecond late before 1970; windows reaching back there read the exact RFC 3339 times.
    const epoch = query.startMs >= 0 ? 'ms' : undefined
    for await (const series of this.#select(statement, epoch)) {
      const columns = columnIndexes(series.columns)
      yield series.values.map((row) => {
        const time = row[columns.time]
        const epochMs = typeof time === 'number' ? time : parseStoredTime(time as string).epochMs
        return { message: messageOf(valuesOf(row, columns), epochMs), epochMs }
      })
    }
  }

  async * pointsBetween (startMs: number, endMs: number): AsyncGenerator<ExistingPoint[]> {
    const statement = buildInfluxQLPointsQuery(this.#settings.measurement, startMs, endMs)
    for await (const series of this.#select(statement, undefined)) {
      const columns = columnIndexes(series.columns)
      yield series.values.map((row) => ({ values: valuesOf(row, columns), ...parseStoredTime(row[columns.time] as string) }))
    }
  }

  async write (lines: readonly string[]): Promise<void> {
    const url = this.#url('/write', { db: this.#settings.database, precision: 'ns' })
    const response = await this.#fetch(url, { method: 'POST', body: lines.join('\n'), headers: { 'content-type': 'text/plain; charset=utf-8' } })
    if (response.status !== 204) {
      const text = await response.text()
      const reason = safeJson(text)?.error ?? text
      if (response.status >= 500) throw unavailable(`InfluxDB refused a write (${response.status}): ${reason}`)
      throw new Error(`InfluxDB refused a write (${response.status}): ${reason}`)
    }
  }

  async ping (): Promise<void> {
    const response = await this.#fetch(this.#url('/ping', {}), { method: 'GET' })
    await response.arrayBuffer()
    if (response.status !== 204 && response.status !== 200) throw unavailable(`InfluxDB ping answered ${response.status}`)
  }

  async prepareForWrites (): Promise<void> {
    // CREATE DATABASE is idempotent on 1.x; 2.x's v1 API maps databases to buckets instead, so
    // there a refusal is expected and the write itself will say whether the mapping exists.
    const url = this.#url('/query', {})
    const response = await this.#fetch(url, {
      method: 'POST',
      body: new URLSearchParams({ q: `CREATE DATABASE ${influxqlIdentifier(this.#settings.database)}` }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' }
    })
    await response.arrayBuffer()
  }

  async close (): Promise<void> {}

  /** Runs a SELECT with chunked results, yielding each series chunk as it arrives. */
  async * #select (statement: string, epoch: 'ms' | undefined): AsyncGenerator<Series> {
    const parameters: Record<string, string> = { db: this.#settings.database, q: statement, chunked: 'true', chunk_size: String(CHUNK_SIZE) }
    if (epoch !== undefined) parameters.epoch = epoch
    const controller = new AbortController()
    const timeoutMs = this.#settings.timeoutMs
    // The timeout bounds each wait for InfluxDB, not the whole of a long stream, and never the
    // time a reader spends with a batch (it is paused while the batch is out).
    let timer: NodeJS.Timeout | undefined = setTimeout(() => controller.abort(), timeoutMs)
    const pause = () => { clearTimeout(timer) }
    const rearm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => controller.abort(), timeoutMs)
    }
    try {
      const response = await this.#fetch(this.#url('/query', {}), {
        method: 'POST',
        body: new URLSearchParams(parameters),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        signal: controller.signal
      })
      if (response.status !== 200 || response.body === null) {
        const text = await response.text()
        throw unavailable(`InfluxDB answered ${response.status} to a query: ${safeJson(text)?.error ?? text}`)
      }
      const decoder = new TextDecoder()
      let pending = ''
      try {
        for await (const bytes of response.body) {
          rearm()
          pending += decoder.decode(bytes as Uint8Array, { stream: true })
          let newline = pending.indexOf('\n')
          while (newline !== -1) {
            const line = pending.slice(0, newline)
            pending = pending.slice(newline + 1)
            for (const series of seriesOf(line)) {
              pause()
              yield series
              rearm()
            }
            newline = pending.indexOf('\n')
          }
        }
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error
        throw unavailable(controller.signal.aborted ? `InfluxDB stopped answering for ${timeoutMs} ms` : 'the connection to InfluxDB broke', error)
      }
      pending += decoder.decode()
      pause()
      if (pending.trim() !== '') yield * seriesOf(pending)
    } finally {
      clearTimeout(timer)
      // Stops InfluxDB's work when the reader leaves early (a client went away).
      controller.abort()
    }
  }

  #url (path: string, parameters: Record<string, string>): string {
    const query = new URLSearchParams(parameters).toString()
    return `${this.#settings.url}${path}${query === '' ? '' : '?' + query}`
  }

  async #fetch (url: string, init: RequestInit): Promise<Response> {
    const signal = init.signal ?? AbortSignal.timeout(this.#settings.timeoutMs)
    try {
      return await fetch(url, { ...init, signal, headers: { ...this.#headers, ...(init.headers as Record<string, string> | undefined) } })
    } catch (error) {
      if (signal.aborted) throw unavailable(`InfluxDB did not answer within ${this.#settings.timeoutMs} ms`, error)
      throw unavailable(`InfluxDB cannot be reached at ${this.#settings.url}`, error)
    }
  }
}

function * seriesOf (line: string): Generator<Series> {
  if (line.trim() === '') return
  const chunk = safeJson(line) as QueryChunk | undefined
  if (chunk === undefined) throw unavailable(`InfluxDB sent a result that is not JSON: ${line.slice(0, 200)}`)
  if (chunk.error !== undefined) throw unavailable(`InfluxDB refused a query: ${chunk.error}`)
  for (const result of chunk.results ?? []) {
    if (result.error !== undefined) throw unavailable(`InfluxDB refused a query: ${result.error}`)
    for (const series of result.series ?? []) yield series
  }
}

interface ColumnIndexes {
  time: number
  message_id: number
  message_code: number
  message_category: number
  device_id: number
  space_id: number
}

function columnIndexes (columns: string[]): ColumnIndexes {
  return {
    time: columns.indexOf('time'),
    message_id: columns.indexOf('message_id'),
    message_code: columns.indexOf('message_code'),
    message_category: columns.indexOf('message_category'),
    device_id: columns.indexOf('device_id'),
    space_id: columns.indexOf('space_id')
  }
}

function valuesOf (row: unknown[], columns: ColumnIndexes): StoredPointValues {
  return {
    message_id: row[columns.message_id] as string,
    message_code: row[columns.message_code] as string,
    message_category: row[columns.message_category] as string,
    device_id: row[columns.device_id] as string | null,
    space_id: row[columns.space_id] as string | null
  }
}

function safeJson (text: string): { error?: string } | undefined {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
