import { InfluxDB, type FluxTableMetaData, type QueryApi, type Row } from '@influxdata/influxdb-client'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../../time/rfc3339.js'
import { EVENT_BATCH_SIZE, type EventQuery } from '../event-store.js'
import { messageOf, parseStoredTime, type StoredPointValues } from './event-point.js'
import { buildFluxBucketQuery, buildFluxEventQuery, buildFluxIndexQuery, buildFluxPointsQuery } from './flux-query.js'
import type { ExistingPoint, IndexedPoint, InfluxBackend, TimedMessage } from './influx-backend.js'
import type { FluxSettings } from './influx-settings.js'
import { InfluxTransport, unavailable } from './influx-transport.js'
import { indexedMessageOf } from './message-id-index.js'

/** Writes above this many bytes go gzipped: InfluxDB 2.x is usually across a network (the client library's own threshold). */
const GZIP_WRITES_ABOVE = 1000

/** ID hashes per index lookup: one Flux condition each. */
const FLUX_HASHES_PER_QUERY = 50

/** One row of an answer, read by column label: a column the table lacks, or a null, is undefined. */
type Cells = (label: string) => string | undefined

/**
 * Flux through the client's QueryApi, created once on the shared transport, and writes to the v2
 * write API (InfluxDB 2.x). Answers are annotated CSV, read row by row as they arrive, so a large
 * answer streams.
 */
export class FluxBackend implements InfluxBackend {
  readonly dialect = 'flux'
  // Only InfluxQL reads writer stamps (the Flux dialect is verified against recorded answers only).
  readonly knownEventsSource = undefined
  readonly #settings: FluxSettings
  readonly #transport: InfluxTransport
  readonly #queries: QueryApi

  constructor (settings: FluxSettings) {
    this.#settings = settings
    this.#transport = new InfluxTransport(settings.url, { authorization: `Token ${settings.token}` }, settings.timeoutMs)
    this.#queries = new InfluxDB({ url: settings.url, token: settings.token, transport: this.#transport }).getQueryApi(settings.org)
  }

  async * queryEvents (query: EventQuery): AsyncGenerator<TimedMessage[]> {
    const flux = buildFluxEventQuery(this.#settings.bucket, this.#settings.measurement, query)
    if (flux === undefined) return
    yield * this.#select(flux, (cells) => {
      const { epochMs } = parseStoredTime(cells('_time') ?? '')
      return { message: messageOf(pointValuesOf(cells), epochMs), epochMs }
    })
  }

  async * indexedEvents (idHashes: readonly string[], startMs: number, endMs: number): AsyncGenerator<TimedMessage[]> {
    const flux = buildFluxIndexQuery(this.#settings.bucket, this.#settings.measurement, idHashes, startMs, endMs)
    if (flux === undefined) return
    for await (const rows of this.#select(flux, (cells) => ({ message: indexedMessageOf(cells('_value')), epochMs: parseStoredTime(cells('_time') ?? '').epochMs }))) {
      yield rows.filter((row): row is TimedMessage => row.message !== undefined)
    }
  }

  async * indexPoints (idHashes: readonly string[]): AsyncGenerator<IndexedPoint[]> {
    for (let from = 0; from < idHashes.length; from += FLUX_HASHES_PER_QUERY) {
      const flux = buildFluxIndexQuery(this.#settings.bucket, this.#settings.measurement, idHashes.slice(from, from + FLUX_HASHES_PER_QUERY), EVENT_TIME_MIN_MS, EVENT_TIME_MAX_MS)
      if (flux === undefined) return
      for await (const rows of this.#select(flux, (cells) => ({ message: indexedMessageOf(cells('_value')), ...parseStoredTime(cells('_time') ?? '') }))) {
        yield rows.filter((row): row is IndexedPoint => row.message !== undefined)
      }
    }
  }

  async * pointsBetween (startMs: number, endMs: number): AsyncGenerator<ExistingPoint[]> {
    const flux = buildFluxPointsQuery(this.#settings.bucket, this.#settings.measurement, startMs, endMs)
    if (flux === undefined) return
    yield * this.#select(flux, (cells) => ({ values: pointValuesOf(cells), ...parseStoredTime(cells('_time') ?? '') }))
  }

  async write (lines: readonly string[]): Promise<void> {
    const { org, bucket } = this.#settings
    const path = `/api/v2/write?org=${encodeURIComponent(org)}&bucket=${encodeURIComponent(bucket)}&precision=ns`
    await this.#transport.writeLines(path, lines, GZIP_WRITES_ABOVE)
  }

  async ping (): Promise<void> {
    await this.#transport.ping()
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

  async close (): Promise<void> {
    this.#transport.close()
  }

  /**
   * Runs a query and yields what `read` makes of each row, in batches, as the rows arrive. The
   * transport times each wait for InfluxDB, and closes the connection when the reader leaves early.
   */
  async * #select<T> (flux: string, read: (cells: Cells) => T): AsyncGenerator<T[]> {
    const columns = new ColumnLookup()
    let batch: T[] = []
    for await (const row of this.#queries.iterateRows(flux)) {
      const cells = columns.cellsOf(row)
      // A failure after the answer has begun comes as a table of its own, the status already 200.
      if (columns.isErrorTable) throw unavailable(`InfluxDB failed a query: ${cells('error') ?? 'no reason given'}`)
      batch.push(read(cells))
      if (batch.length >= EVENT_BATCH_SIZE) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }
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
