import type { EventQuery } from '../src/store/event-store.js'
import { buildInfluxQLEventQuery } from '../src/store/influx/influxql-query.js'
import type { LoadRequest } from './load.js'

/** As InfluxQLBackend reads: chunked JSON lines of at most this many rows. */
const CHUNK_SIZE = '10000'

/**
 * The store ceiling: the very statement the provider sends for a request (from the provider's own
 * query builder), posted to influxd's /query the way InfluxQLBackend posts it.
 */
export function rawInfluxRequest (influxUrl: string, database: string, measurement: string, query: EventQuery): LoadRequest {
  const body = new URLSearchParams({
    db: database,
    q: buildInfluxQLEventQuery(measurement, query),
    chunked: 'true',
    chunk_size: CHUNK_SIZE,
    epoch: 'ms'
  })
  return {
    url: `${influxUrl}/query`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString()
  }
}

/** Sends the raw query once and counts the rows of every chunk (a check that it asks for the same events). */
export async function countRawRows (request: LoadRequest): Promise<number> {
  const response = await fetch(request.url, {
    method: request.method ?? 'GET',
    headers: request.headers ?? {},
    body: request.body ?? null,
    signal: AbortSignal.timeout(120_000)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`InfluxDB answered ${response.status} to the raw query: ${text.slice(0, 200)}`)
  let rows = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const chunk = JSON.parse(line) as { error?: string, results?: Array<{ error?: string, series?: Array<{ values?: unknown[] }> }> }
    const error = chunk.error ?? chunk.results?.find((result) => result.error !== undefined)?.error
    if (error !== undefined) throw new Error(`InfluxDB refused the raw query: ${error}`)
    for (const result of chunk.results ?? []) {
      for (const series of result.series ?? []) rows += series.values?.length ?? 0
    }
  }
  return rows
}
