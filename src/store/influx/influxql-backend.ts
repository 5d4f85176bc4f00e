import { randomInt } from 'node:crypto'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../../time/rfc3339.js'
import type { EventQuery } from '../event-store.js'
import { messageOf, parseStoredTime, type StoredPointValues } from './event-point.js'
import type { ExistingPoint, IndexedPoint, InfluxBackend, KnownEventsSource, TimedMessage } from './influx-backend.js'
import type { InfluxQLSettings } from './influx-settings.js'
import { InfluxTransport, unavailable } from './influx-transport.js'
import { buildInfluxQLEventQuery, buildInfluxQLIndexQuery, buildInfluxQLPointsQuery, buildInfluxQLWriterStampsQuery, influxqlIdentifier } from './influxql-query.js'
import type { WriterStamps } from './writer-stamps.js'
import { indexedMessageOf } from './message-id-index.js'

/**
 * Rows per chunk InfluxDB sends: each chunk is parsed in one go, so it bounds how long a large
 * answer holds the event loop (about a millisecond for 1,000 rows) and the size of its strings.
 */
const CHUNK_SIZE = 1000

/** ID hashes per statement of an index lookup (indexPoints). */
const INDEX_HASHES_PER_STATEMENT = 50

/**
 * Milliseconds per request of pointsAt, a statement each (InfluxQL has no OR of time ranges).
 * One request a millisecond took 1.7 s for 2,000 of them against a local influxd.
 */
const MILLISECONDS_PER_REQUEST = 200

interface Series {
  tags?: Record<string, string>
  columns: string[]
  values: unknown[][]
}

interface QueryChunk {
  error?: string
  results?: Array<{ error?: string, series?: Series[] }>
}

/**
 * InfluxQL over the 1.x HTTP API (/query, /write, /ping), which InfluxDB 1.x, 2.x (v1
 * compatibility) and 3.x all serve. Results are read chunked, so a large answer streams.
 */
export class InfluxQLBackend implements InfluxBackend, KnownEventsSource {
  readonly dialect = 'influxql'
  readonly knownEventsSource: KnownEventsSource = this
  readonly #settings: InfluxQLSettings
  readonly #transport: InfluxTransport

  constructor (settings: InfluxQLSettings) {
    this.#settings = settings
    const headers: Record<string, string> = {}
    if (settings.token !== undefined) headers.authorization = `Token ${settings.token}`
    if (settings.username !== undefined) {
      headers.authorization = 'Basic ' + Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')
    }
    this.#transport = new InfluxTransport(settings.url, headers, settings.timeoutMs)
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

  async * indexedEvents (idHashes: readonly string[], startMs: number, endMs: number): AsyncGenerator<TimedMessage[]> {
    if (idHashes.length === 0) return
    yield * this.#select(influxQLIndexQueryForm(this.#settings.database, this.#settings.measurement, idHashes, startMs, endMs), (series) => {
      const time = series.columns.indexOf('time')
      const value = series.columns.indexOf('message')
      const found: TimedMessage[] = []
      for (const row of series.values) {
        const message = indexedMessageOf(row[value] as string | undefined)
        const at = row[time]
        if (message !== undefined) found.push({ message, epochMs: typeof at === 'number' ? at : parseStoredTime(at as string).epochMs })
      }
      return found
    })
  }

  /**
   * One request of several statements, each of INDEX_HASHES_PER_STATEMENT hashes: InfluxDB 1.6
   * spends less on them than on as many requests (1,000 new IDs over 100,000 indexed events: 38
   * against 64 ms of influxd's CPU), and far less than on one statement of every hash (its time
   * grows faster than its conditions: 1,000 took 258 ms). Times as RFC 3339, for their slots.
   */
  async * indexPoints (idHashes: readonly string[]): AsyncGenerator<IndexedPoint[]> {
    if (idHashes.length === 0) return
    const statements: string[] = []
    for (let from = 0; from < idHashes.length; from += INDEX_HASHES_PER_STATEMENT) {
      statements.push(buildInfluxQLIndexQuery(this.#settings.measurement, idHashes.slice(from, from + INDEX_HASHES_PER_STATEMENT), EVENT_TIME_MIN_MS, EVENT_TIME_MAX_MS))
    }
    yield * this.#indexPointsOf(statements.join('; '))
  }

  async * allIndexPoints (): AsyncGenerator<IndexedPoint[]> {
    yield * this.#indexPointsOf(buildInfluxQLIndexQuery(this.#settings.measurement, undefined, EVENT_TIME_MIN_MS, EVENT_TIME_MAX_MS))
  }

  async * #indexPointsOf (statements: string): AsyncGenerator<IndexedPoint[]> {
    yield * this.#select(selectForm(this.#settings.database, statements, undefined), (series) => {
      const time = series.columns.indexOf('time')
      const value = series.columns.indexOf('message')
      const found: IndexedPoint[] = []
      for (const row of series.values) {
        const message = indexedMessageOf(row[value] as string | undefined)
        if (message !== undefined) found.push({ message, ...parseStoredTime(row[time] as string) })
      }
      return found
    })
  }

  /** Each writer's latest stamp as "<time> <n>" (writer-stamps.ts). */
  async writerStamps (): Promise<WriterStamps> {
    const stamps = new Map<string, string>()
    const form = selectForm(this.#settings.database, buildInfluxQLWriterStampsQuery(this.#settings.measurement), undefined)
    for await (const series of this.#select(form, (series) => series)) {
      const writer = series.tags?.writer
      if (writer === undefined) continue
      for (const row of series.values) stamps.set(writer, row.join(' '))
    }
    return stamps
  }

  async * pointsBetween (startMs: number, endMs: number): AsyncGenerator<ExistingPoint[]> {
    yield * this.#pointsOf(buildInfluxQLPointsQuery(this.#settings.measurement, startMs, endMs))
  }

  async * pointsAt (milliseconds: readonly number[]): AsyncGenerator<ExistingPoint[]> {
    for (let from = 0; from < milliseconds.length; from += MILLISECONDS_PER_REQUEST) {
      const statements = milliseconds.slice(from, from + MILLISECONDS_PER_REQUEST).map((ms) => buildInfluxQLPointsQuery(this.#settings.measurement, ms, ms + 1))
      yield * this.#pointsOf(statements.join('; '))
    }
  }

  async * #pointsOf (statements: string): AsyncGenerator<ExistingPoint[]> {
    yield * this.#select(selectForm(this.#settings.database, statements, undefined), (series) => {
      const columns = columnIndexes(series.columns)
      return series.values.map((row) => ({ values: valuesOf(row, columns), ...parseStoredTime(row[columns.time] as string) }))
    })
  }

  async write (lines: readonly string[]): Promise<void> {
    await this.#transport.writeLines(`/write?${new URLSearchParams({ db: this.#settings.database, precision: 'ns' })}`, lines)
  }

  async ping (): Promise<void> {
    await this.#transport.ping()
  }

  async prepareForWrites (): Promise<void> {
    // CREATE DATABASE is idempotent on 1.x; 2.x's v1 API maps databases to buckets instead, so
    // there a refusal is expected and the write itself will say whether the mapping exists.
    await this.#transport.exchange(formRequest(new URLSearchParams({ q: `CREATE DATABASE ${influxqlIdentifier(this.#settings.database)}` })))
  }

  async close (): Promise<void> {
    this.#transport.close()
  }

  /**
   * Runs a SELECT with chunked results, yielding each series chunk, read by `rows`, as it arrives.
   * A query given up on before its end (a timeout, a client gone) is also stopped in InfluxDB.
   */
  async * #select<T> (form: URLSearchParams, rows: (series: Series) => T): AsyncGenerator<T> {
    form.set('q', ownStatements(form.get('q') ?? ''))
    let complete = false
    try {
      yield * this.#read(form, rows)
      complete = true
    } finally {
      // Not awaited: the reader has left; the kill goes on in the background, its failure swallowed.
      if (!complete) this.#stopAbandoned(form.get('q') ?? '').catch(() => {})
    }
  }

  /**
   * Closing the connection does not always stop a query in InfluxDB 1.x: one still planning or
   * reading its first points runs on, at full CPU, for as long as it takes. So the query is looked
   * for among the running ones (SHOW QUERIES) and killed (KILL QUERY). Best effort: without the
   * right to list queries, or with InfluxDB gone, nothing more can be done.
   */
  async #stopAbandoned (statement: string): Promise<void> {
    try {
      const shown = await this.#transport.exchange(formRequest(new URLSearchParams({ q: 'SHOW QUERIES' })))
      if (shown.status !== 200) return
      const series = (JSON.parse(shown.text) as QueryChunk).results?.[0]?.series?.[0]
      if (series === undefined) return
      const qid = series.columns.indexOf('qid')
      const query = series.columns.indexOf('query')
      const database = series.columns.indexOf('database')
      for (const row of series.values) {
        if (row[database] !== this.#settings.database || !sameStatement(String(row[query]), statement)) continue
        await this.#transport.exchange(formRequest(new URLSearchParams({ q: `KILL QUERY ${Number(row[qid])}` })))
      }
    } catch {}
  }

  async * #read<T> (form: URLSearchParams, rows: (series: Series) => T): AsyncGenerator<T> {
    // Lines (one JSON chunk each) arrive in pieces: keep the pieces of the current line and
    // look for its end only in each new piece, so a long line costs linear time.
    let pieces: string[] = []
    for await (const data of this.#transport.stream(formRequest(form))) {
      let piece = data
      let newline = piece.indexOf('\n')
      while (newline !== -1) {
        pieces.push(piece.slice(0, newline))
        const line = pieces.join('')
        pieces = []
        piece = piece.slice(newline + 1)
        for (const series of seriesOf(line)) yield rows(series)
        newline = piece.indexOf('\n')
      }
      if (piece !== '') pieces.push(piece)
    }
    const rest = pieces.join('')
    if (rest.trim() !== '') for (const series of seriesOf(rest)) yield rows(series)
  }
}

/** This process's tag in the statements it sends (ownStatements): 31 random bits. */
const PROCESS_TAG = BigInt(randomInt(2 ** 31))
let statementsSent = 0n
/** 1677-12-01T00:00:00Z in nanoseconds: after InfluxDB's earliest time, 31 days before the provider's (EVENT_TIME_MIN_MS, 1678). */
const OWN_CONDITION_BASE_NS = BigInt(Date.UTC(1677, 11, 1)) * 1_000_000n

/**
 * Statements made this request's own: each WHERE begins with `time > '<an instant of December
 * 1677>'`, true of every event the provider stores (none is before 1678), and another instant
 * for every request (a count, under this process's random tag: 2^51 ns, 26 days). A query given
 * up on is killed by its text (#stopAbandoned), and two consumers asking the same (a dashboard's
 * "today", a retry), in this process, another worker or another instance, send the same text:
 * one client leaving killed the other's answer, cut or 503 (a black-box attacker's session,
 * 2026-11-28). InfluxDB intersects the time conditions, so the query reads what it did.
 */
export function ownStatements (statements: string): string {
  const ns = OWN_CONDITION_BASE_NS + PROCESS_TAG * 2n ** 20n + (statementsSent++ % 2n ** 20n)
  const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n)
  const instant = new Date(Number(ms)).toISOString().replace('Z', String(ns - ms * 1_000_000n).padStart(6, '0') + 'Z')
  return afterEachWhere(statements, `time > '${instant}' AND `)
}

/**
 * The statements with `condition` after each WHERE keyword: one outside quotes, since a string
 * literal or an identifier may hold " WHERE " (a code, an ID, the measurement's name: a review
 * found a code's query refused as malformed, and a measurement renamed inside its quotes).
 */
function afterEachWhere (statements: string, condition: string): string {
  let out = ''
  let from = 0
  let quote = ''
  for (let i = 0; i < statements.length; i++) {
    const char = statements[i]!
    if (quote !== '') {
      if (char === '\\') i++
      else if (char === quote) quote = ''
    } else if (char === "'" || char === '"') {
      quote = char
    } else if (char === ' ' && statements.startsWith(' WHERE ', i)) {
      out += statements.slice(from, i + 7) + condition
      from = i + 7
      i += 6
    }
  }
  return out + statements.slice(from)
}

/**
 * Whether SHOW QUERIES lists this statement: InfluxDB prints a running query again, with
 * identifiers unquoted where they can be and literals as sent.
 */
export function sameStatement (shown: string, sent: string): boolean {
  const bare = (text: string) => text.replaceAll('"', '').replace(/\s+/g, ' ').trim()
  return bare(shown) === bare(sent)
}

/** A form POSTed to /query. */
function formRequest (form: URLSearchParams) {
  return { method: 'POST' as const, path: '/query', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
}

/** The form of a chunked SELECT, as POSTed to /query. */
function selectForm (database: string, statement: string, epoch: 'ms' | undefined): URLSearchParams {
  const form = new URLSearchParams({ db: database, q: statement, chunked: 'true', chunk_size: String(CHUNK_SIZE) })
  if (epoch !== undefined) form.set('epoch', epoch)
  return form
}

/**
 * The request behind an events query, exactly as sent but for its own condition (#select,
 * ownStatements; the benchmark's store ceiling sends it too, with one). epoch=ms is the cheapest form to read, but InfluxDB truncates it toward zero, a
 * millisecond late before 1970; windows reaching back there read the exact RFC 3339 times.
 */
export function influxQLEventQueryForm (database: string, measurement: string, query: EventQuery): URLSearchParams {
  return selectForm(database, buildInfluxQLEventQuery(measurement, query), query.startMs >= 0 ? 'ms' : undefined)
}

/** The request behind a message_id index lookup, exactly as sent but for its own condition (the benchmark's store ceiling sends it too, with one). */
export function influxQLIndexQueryForm (database: string, measurement: string, idHashes: readonly string[], startMs: number, endMs: number): URLSearchParams {
  return selectForm(database, buildInfluxQLIndexQuery(measurement, idHashes, startMs, endMs), startMs >= 0 ? 'ms' : undefined)
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

function safeJson (text: string): QueryChunk | undefined {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
