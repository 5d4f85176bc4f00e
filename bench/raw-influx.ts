import type { EventQuery } from '../src/store/event-store.js'
import { influxQLEventQueryForm, influxQLIndexQueryForm, ownStatements } from '../src/store/influx/influxql-backend.js'
import { idHashesOf } from '../src/store/influx/message-id-index.js'
import type { LoadRequest } from './load.js'

/**
 * The store ceiling: the very request the provider sends for a query (built by the provider's
 * own InfluxQLBackend: statement, chunking, epoch; for message_ids, the index lookup), posted to
 * influxd's /query.
 */
export function rawInfluxRequest (influxUrl: string, database: string, measurement: string, query: EventQuery): LoadRequest {
  const body = query.messageIds !== undefined
    ? influxQLIndexQueryForm(database, measurement, idHashesOf(query.messageIds), query.startMs, query.endMs)
    : influxQLEventQueryForm(database, measurement, query)
  // With the condition each request of the provider's carries (one instant for every request of the run).
  body.set('q', ownStatements(body.get('q') ?? ''))
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
