import type { InfluxQLSettings } from '../../config.js'
import { StoreUnavailableError, type EventQuery } from '../event-store.js'
import { messageOf, parseStoredTime, type StoredPointValues } from './event-point.js'
import type { ExistingPoint, InfluxBackend } from './influx-backend.js'
import { buildInfluxQLEventQuery, buildInfluxQLPointsQuery, influxqlIdentifier } from './influxql-query.js'
import type { TimedMessage } from './ordered-batches.js'
import { InfluxHttp, readText } from './influx-http.js'

/**
 * Rows per chunk InfluxDB sends: each chunk is parsed in one go, so it bounds how long a large
 * answer holds the event loop (about a millisecond for 1,000 rows) and the size of its strings.
 */
const CHUNK_SIZE = 1000

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
  readonly #http: InfluxHttp

  constructor (settings: InfluxQLSettings) {
    this.#settings = settings
    const headers: Record<string, string> = {}
    if (settings.token !== undefined) headers.authorization = `Token ${settings.token}`
    if (settings.username !== undefined) {
      headers.authorization = 'Basic ' + Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')
    }
    this.#http = new InfluxHttp(settings.url, headers, settings.timeoutMs)
  }

  async * queryEvents (query: EventQuery): AsyncGenerator<TimedMessage[]> {
    yield * this.#select(influxQLEventQueryForm(this.#settings.database, this.#settings.measurement, query), (series) => {
      const columns = columnIndexes(series.columns)
      return series.values.map((row) => {
        const time = row[columns.time]
        const epochMs = typeof time === 'number' ? time : parseStoredTime(time as string).epochMs
        return { message: messageOf(valuesOf(row, columns), epochMs), epochMs }
      })
    })
  }

  async * pointsBetween (startMs: number, endMs: number): AsyncGenerator<ExistingPoint[]> {
    const statement = buildInfluxQLPointsQuery(this.#settings.measurement, startMs, endMs)
    yield * this.#select(selectForm(this.#settings.database, statement, undefined), (series) => {
      const columns = columnIndexes(series.columns)
      return series.values.map((row) => ({ values: valuesOf(row, columns), ...parseStoredTime(row[columns.time] as string) }))
    })
  }

  async write (lines: readonly string[]): Promise<void> {
    const response = await this.#http.request({
      method: 'POST',
      path: '/write',
      query: { db: this.#settings.database, precision: 'ns' },
      body: lines.join('\n'),
      contentType: 'text/plain; charset=utf-8'
    })
    const text = await readText(response)
    if (response.statusCode !== 204) {
      const reason = safeJson(text)?.error ?? text
      if ((response.statusCode ?? 500) >= 500) throw unavailable(`InfluxDB refused a write (${response.statusCode}): ${reason}`)
      throw new Error(`InfluxDB refused a write (${response.statusCode}): ${reason}`)
    }
  }

  async ping (): Promise<void> {
    const response = await this.#http.request({ method: 'GET', path: '/ping' })
    response.resume()
    if (response.statusCode !== 204 && response.statusCode !== 200) throw unavailable(`InfluxDB ping answered ${response.statusCode}`)
  }

  async prepareForWrites (): Promise<void> {
    // CREATE DATABASE is idempotent on 1.x; 2.x's v1 API maps databases to buckets instead, so
    // there a refusal is expected and the write itself will say whether the mapping exists.
    const response = await this.#http.request({
      method: 'POST',
      path: '/query',
      body: new URLSearchParams({ q: `CREATE DATABASE ${influxqlIdentifier(this.#settings.database)}` }).toString(),
      contentType: 'application/x-www-form-urlencoded'
    })
    response.resume()
  }

  async close (): Promise<void> {
    this.#http.close()
  }

  /** Runs a SELECT with chunked results, yielding each series chunk, read by `rows`, as it arrives. */
  async * #select<T> (form: URLSearchParams, rows: (series: Series) => T): AsyncGenerator<T> {
    const timeoutMs = this.#http.timeoutMs
    const exchange = this.#http.post('/query', form.toString())
    let timedOut = false
    const expire = () => {
      timedOut = true
      exchange.abort()
    }
    // The timeout bounds each wait for InfluxDB, not the whole of a long stream, and never the
    // time a reader spends with a batch (it is paused while the batch is out).
    let timer: NodeJS.Timeout | undefined = setTimeout(expire, timeoutMs)
    const pause = () => { clearTimeout(timer) }
    const rearm = () => {
      clearTimeout(timer)
      timer = setTimeout(expire, timeoutMs)
    }
    const lost = (error: unknown) => timedOut
      ? unavailable(`InfluxDB did not answer within ${timeoutMs} ms`, error)
      : error instanceof StoreUnavailableError ? error : unavailable('the connection to InfluxDB broke', error)
    let complete = false
    try {
      let response
      try {
        response = await exchange.response
      } catch (error) {
        throw lost(error)
      }
      if (response.statusCode !== 200) {
        const text = await readText(response)
        throw unavailable(`InfluxDB answered ${response.statusCode} to a query: ${safeJson(text)?.error ?? text}`)
      }
      response.setEncoding('utf8')
      // Lines (one JSON chunk each) arrive in pieces: keep the pieces of the current line and
      // look for its end only in each new piece, so a long line costs linear time.
      let pieces: string[] = []
      try {
        for await (const data of response) {
          rearm()
          let piece = data as string
          let newline = piece.indexOf('\n')
          while (newline !== -1) {
            pieces.push(piece.slice(0, newline))
            const line = pieces.join('')
            pieces = []
            piece = piece.slice(newline + 1)
            for (const series of seriesOf(line)) {
              const converted = rows(series)
              pause()
              yield converted
              rearm()
            }
            newline = piece.indexOf('\n')
          }
          if (piece !== '') pieces.push(piece)
        }
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error
        throw lost(error)
      }
      pause()
      const rest = pieces.join('')
      if (rest.trim() !== '') for (const series of seriesOf(rest)) yield rows(series)
      complete = true
    } finally {
      clearTimeout(timer)
      // A reader that leaves early (a client went away) stops InfluxDB's work; a finished answer
      // leaves its connection to be kept alive.
      if (!complete) exchange.abort()
    }
  }
}

/** The form of a chunked SELECT, as POSTed to /query. */
function selectForm (database: string, statement: string, epoch: 'ms' | undefined): URLSearchParams {
  const form = new URLSearchParams({ db: database, q: statement, chunked: 'true', chunk_size: String(CHUNK_SIZE) })
  if (epoch !== undefined) form.set('epoch', epoch)
  return form
}

/**
 * The request behind an events query, exactly as sent (the benchmark's store ceiling sends it
 * too). epoch=ms is the cheapest form to read, but InfluxDB truncates it toward zero, a
 * millisecond late before 1970; windows reaching back there read the exact RFC 3339 times.
 */
export function influxQLEventQueryForm (database: string, measurement: string, query: EventQuery): URLSearchParams {
  return selectForm(database, buildInfluxQLEventQuery(measurement, query), query.startMs >= 0 ? 'ms' : undefined)
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
