import { HttpError, InfluxDB, type FluxTableMetaData, type Row } from '@influxdata/influxdb-client'
import type { FluxSettings } from '../../config.js'
import { StoreUnavailableError, type EventQuery } from '../event-store.js'
import { messageOf, parseStoredTime, type StoredPointValues } from './event-point.js'
import { buildFluxBucketQuery, buildFluxEventQuery, buildFluxPointsQuery } from './flux-query.js'
import type { ExistingPoint, InfluxBackend } from './influx-backend.js'
import type { TimedMessage } from './ordered-batches.js'

const BATCH_SIZE = 1000

/** A query failed at InfluxDB's end: the provider answers 503 and logs the cause. */
function unavailable (message: string, cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError(message, cause === undefined ? undefined : { cause })
}

/** One row of an answer, read by column label: a column the table lacks, or a null, is undefined. */
type Cells = (label: string) => string | undefined

/**
 * Flux through the client's QueryApi and writes through its WriteApi (InfluxDB 2.x). Answers are
 * annotated CSV, read row by row as they arrive, so a large answer streams.
 */
export class FluxBackend implements InfluxBackend {
  readonly dialect = 'flux'
  readonly #settings: FluxSettings

  constructor (settings: FluxSettings) {
    this.#settings = settings
  }

  async * queryEvents (query: EventQuery): AsyncGenerator<TimedMessage[]> {
    const flux = buildFluxEventQuery(this.#settings.bucket, this.#settings.measurement, query)
    if (flux === undefined) return
    yield * this.#select(flux, (cells) => {
      const { epochMs } = parseStoredTime(cells('_time') ?? '')
      return { message: messageOf(pointValuesOf(cells), epochMs), epochMs }
    })
  }

  async * pointsBetween (startMs: number, endMs: number): AsyncGenerator<ExistingPoint[]> {
    const flux = buildFluxPointsQuery(this.#settings.bucket, this.#settings.measurement, startMs, endMs)
    if (flux === undefined) return
    yield * this.#select(flux, (cells) => ({ values: pointValuesOf(cells), ...parseStoredTime(cells('_time') ?? '') }))
  }

  async write (lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return
    const { org, bucket, timeoutMs } = this.#settings
    const signal = AbortSignal.timeout(timeoutMs)
    let failure: Error | undefined
    const writeApi = this.#client(signal).getWriteApi(org, bucket, 'ns', {
      // All lines in one request, sent on close, never retried: the caller decides what a failure means.
      batchSize: lines.length + 1,
      maxBatchBytes: Number.MAX_SAFE_INTEGER,
      flushInterval: 0,
      maxRetries: 0,
      // Answering the failure here also keeps the client from logging it to the console.
      writeFailed: (error) => {
        failure ??= this.#writeFailure(error, signal)
        return Promise.reject(failure)
      }
    })
    writeApi.writeRecords([...lines])
    try {
      await writeApi.close()
    } catch (error) {
      throw failure ?? error
    }
    if (failure !== undefined) throw failure
  }

  async ping (): Promise<void> {
    const { url, timeoutMs } = this.#settings
    const signal = AbortSignal.timeout(timeoutMs)
    let status: number
    try {
      const response = await fetch(`${url}/ping`, { signal })
      await response.arrayBuffer()
      status = response.status
    } catch (error) {
      if (signal.aborted) throw unavailable(`InfluxDB did not answer within ${timeoutMs} ms`, error)
      throw unavailable(`InfluxDB cannot be reached at ${url}`, error)
    }
    if (status !== 204 && status !== 200) throw unavailable(`InfluxDB ping answered ${status}`)
  }

  /**
   * Says early, and plainly, that the bucket is missing, which the writer's first read would
   * otherwise report as a failed query. Only a bucket list without it counts: when the list
   * cannot be read at all, the writes themselves will tell.
   */
  async prepareForWrites (): Promise<void> {
    const { bucket, org } = this.#settings
    let found = false
    try {
      for await (const names of this.#select(buildFluxBucketQuery(bucket), (cells) => cells('name'))) {
        if (names.includes(bucket)) found = true
      }
    } catch {
      return
    }
    if (!found) throw new Error(`InfluxDB has no bucket ${JSON.stringify(bucket)} in org ${JSON.stringify(org)} that the token can read`)
  }

  async close (): Promise<void> {}

  /**
   * Runs a query and yields what `read` makes of each row, in batches, as the rows arrive. The
   * timeout bounds each wait for InfluxDB, not the whole of a long stream, and not the time the
   * reader holds a batch.
   */
  async * #select<T> (flux: string, read: (cells: Cells) => T): AsyncGenerator<T[]> {
    const { org, timeoutMs } = this.#settings
    const controller = new AbortController()
    const abort = () => controller.abort()
    let timer = setTimeout(abort, timeoutMs)
    const rows = this.#client(controller.signal).getQueryApi(org).iterateRows(flux)[Symbol.asyncIterator]()
    const columns = new ColumnLookup()
    let answered = false
    let batch: T[] = []
    try {
      for (;;) {
        let next: IteratorResult<Row>
        try {
          next = await rows.next()
        } catch (error) {
          throw this.#queryFailure(error, controller.signal.aborted, answered)
        }
        if (next.done === true) break
        answered = true
        timer.refresh()
        const cells = columns.cellsOf(next.value)
        // A failure after the answer has begun comes as a table of its own, the status already 200.
        if (columns.isErrorTable) throw unavailable(`InfluxDB failed a query: ${cells('error') ?? 'no reason given'}`)
        batch.push(read(cells))
        if (batch.length >= BATCH_SIZE) {
          clearTimeout(timer)
          yield batch
          batch = []
          timer = setTimeout(abort, timeoutMs)
        }
      }
      clearTimeout(timer)
      if (batch.length > 0) yield batch
    } finally {
      clearTimeout(timer)
      // Closes the connection when the reader leaves early (a client went away), which makes
      // InfluxDB cancel the query.
      controller.abort()
      await rows.return?.().catch(() => {})
    }
  }

  /**
   * A client bound to one request's signal, so a timeout or an early stop closes that request's
   * connection. Its connection is not kept alive: Node hands a finished response's socket back to
   * the pool without an error listener, and an abort arriving then would crash the process (or, once
   * reused, cut another request). The client's own socket timeout is off: it only reports, leaving
   * the connection open, and it would also fire while a reader holds a batch and the stream is paused.
   */
  #client (signal: AbortSignal): InfluxDB {
    const { url, token } = this.#settings
    return new InfluxDB({ url, token, timeout: 0, transportOptions: { signal, agent: false } })
  }

  #queryFailure (error: unknown, timedOut: boolean, answered: boolean): StoreUnavailableError {
    const { url, timeoutMs } = this.#settings
    if (error instanceof StoreUnavailableError) return error
    if (timedOut) return unavailable(answered ? `InfluxDB stopped answering for ${timeoutMs} ms` : `InfluxDB did not answer within ${timeoutMs} ms`, error)
    if (error instanceof HttpError) return unavailable(`InfluxDB answered ${error.statusCode} to a query: ${reasonOf(error)}`, error)
    return unavailable(answered ? 'the connection to InfluxDB broke' : `InfluxDB cannot be reached at ${url}`, error)
  }

  #writeFailure (error: Error, signal: AbortSignal): Error {
    const { url, timeoutMs } = this.#settings
    if (signal.aborted) return unavailable(`InfluxDB did not answer a write within ${timeoutMs} ms`, error)
    if (!(error instanceof HttpError)) return unavailable(`InfluxDB cannot be reached at ${url}`, error)
    const message = `InfluxDB refused a write (${error.statusCode}): ${reasonOf(error)}`
    return error.statusCode >= 500 ? unavailable(message, error) : new Error(message, { cause: error })
  }
}

/** InfluxDB's own words: 2.x answers errors as JSON with a message. */
function reasonOf (error: HttpError): string {
  const message = (error.json as { message?: unknown } | undefined)?.message
  if (typeof message === 'string') return message
  return error.body !== undefined && error.body !== '' ? error.body : `${error.statusCode} ${error.statusMessage ?? ''}`.trim()
}

function pointValuesOf (cells: Cells): StoredPointValues {
  return {
    message_id: cells('_value')!,
    message_code: cells('message_code')!,
    message_category: cells('message_category')!,
    device_id: cells('device_id'),
    space_id: cells('space_id')
  }
}

/**
 * Finds a row's cells by label. Columns are looked up once per table schema, and values are
 * read as sent: the client's type serializers are global settings any other code may change.
 */
class ColumnLookup {
  #meta: FluxTableMetaData | undefined
  #indexes = new Map<string, { index: number, defaultValue: string }>()
  /** Whether the current table is how Flux reports a failure: columns error and reference. */
  isErrorTable = false

  cellsOf ({ values, tableMeta }: Row): Cells {
    if (tableMeta !== this.#meta) {
      this.#meta = tableMeta
      this.#indexes = new Map(tableMeta.columns.map((column, index) => [column.label, { index, defaultValue: column.defaultValue }]))
      this.isErrorTable = this.#indexes.has('error') && this.#indexes.has('reference')
    }
    const indexes = this.#indexes
    return (label) => {
      const column = indexes.get(label)
      if (column === undefined) return undefined
      const value = values[column.index] || column.defaultValue
      return value === '' ? undefined : value
    }
  }
}
