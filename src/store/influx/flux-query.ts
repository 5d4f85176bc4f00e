import { flux, fluxDateTime, fluxExpression, fluxString } from '@influxdata/influxdb-client'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../../time/rfc3339.js'
import type { EventQuery } from '../event-store.js'
import { indexMeasurementOf } from './message-id-index.js'
import { MAX_PUSHED_ENTITIES } from './pushed-entities.js'
import { encodeTagValue } from './tag-value.js'

/** The columns a point is read back with; everything else InfluxDB would send is dropped at its end. */
export const POINT_COLUMNS = ['_time', '_value', 'device_id', 'space_id', 'message_code', 'message_category'] as const

type PointColumn = typeof POINT_COLUMNS[number]

const KEEP_POINT_COLUMNS = `keep(columns: [${POINT_COLUMNS.map((column) => `"${column}"`).join(', ')}])`

/** Pipeline stages are joined one per line, so a query reads well in a log. */
const PIPE = '\n  |> '

/** One comparison; the value goes through the client's escaping, so no ID can change the query's meaning. */
function equals (column: PointColumn, value: string): string {
  return flux`r.${fluxExpression(column)} == ${fluxString(value)}`.toString()
}

/** Alternatives in parentheses (`and` binds tighter than `or`); none at all matches nothing. */
function anyOf (comparisons: string[]): string {
  return comparisons.length === 0 ? 'false' : `(${comparisons.join(' or ')})`
}

function equalsAny (column: PointColumn, values: Iterable<string>, encode: (value: string) => string): string[] {
  return [...values].map((value) => equals(column, encode(value)))
}

const asIs = (value: string) => value

function clampedTime (epochMs: number): number {
  return Math.min(Math.max(epochMs, EVENT_TIME_MIN_MS), EVENT_TIME_MAX_MS)
}

/**
 * The stages every query starts with: the bucket, the window (start inclusive, stop exclusive,
 * clamped as the InfluxQL dialect clamps it) and the measurement's one field. undefined when the
 * window is empty: Flux refuses an empty range ("cannot query an empty range") where InfluxQL
 * answers nothing, so such a query is not sent at all.
 */
function pointStages (bucket: string, measurement: string, startMs: number, endMs: number): string[] | undefined {
  const start = clampedTime(startMs)
  const stop = clampedTime(endMs)
  if (start >= stop) return undefined
  return [
    flux`from(bucket: ${fluxString(bucket)})`.toString(),
    flux`range(start: ${fluxDateTime(new Date(start).toISOString())}, stop: ${fluxDateTime(new Date(stop).toISOString())})`.toString(),
    flux`filter(fn: (r) => r._measurement == ${fluxString(measurement)} and r._field == "message_id")`.toString()
  ]
}

/**
 * The one query behind an events request, mirroring buildInfluxQLEventQuery: window, entities
 * and exclusive filter all pushed down, then one table in time order. Tags are compared in their
 * stored encoding; message_id is a field and category a fixed word, both stored as they are.
 * undefined when the window is empty.
 */
export function buildFluxEventQuery (bucket: string, measurement: string, query: EventQuery): string | undefined {
  const stages = pointStages(bucket, measurement, query.startMs, query.endMs)
  if (stages === undefined) return undefined
  const conditions = []
  const { entities } = query
  if (entities !== undefined && entities.deviceIds.size + entities.spaceIds.size <= MAX_PUSHED_ENTITIES) {
    conditions.push(anyOf([
      ...equalsAny('device_id', entities.deviceIds, encodeTagValue),
      ...equalsAny('space_id', entities.spaceIds, encodeTagValue)
    ]))
  }
  if (query.messageIds !== undefined) conditions.push(anyOf(equalsAny('_value', query.messageIds, asIs)))
  if (query.category !== undefined) conditions.push(equals('message_category', query.category))
  if (query.messageCodes !== undefined) conditions.push(anyOf(equalsAny('message_code', query.messageCodes, encodeTagValue)))
  if (conditions.length > 0) stages.push(`filter(fn: (r) => ${conditions.join(' and ')})`)
  // Each series is its own table; only one merged table can be put in time order. Columns are
  // dropped before the sort, which holds the whole answer in InfluxDB's memory.
  stages.push('group()', KEEP_POINT_COLUMNS, 'sort(columns: ["_time"])')
  return stages.join(PIPE)
}

/** The index points of some ID hashes in a window, one table in time order (message-id-index.ts). undefined when the window is empty. */
export function buildFluxIndexQuery (bucket: string, measurement: string, idHashes: readonly string[], startMs: number, endMs: number): string | undefined {
  const start = clampedTime(startMs)
  const stop = clampedTime(endMs)
  if (start >= stop || idHashes.length === 0) return undefined
  const hashes = idHashes.map((hash) => flux`r.id_hash == ${fluxString(hash)}`.toString())
  return [
    flux`from(bucket: ${fluxString(bucket)})`.toString(),
    flux`range(start: ${fluxDateTime(new Date(start).toISOString())}, stop: ${fluxDateTime(new Date(stop).toISOString())})`.toString(),
    flux`filter(fn: (r) => r._measurement == ${fluxString(indexMeasurementOf(measurement))} and r._field == "message")`.toString(),
    `filter(fn: (r) => ${anyOf(hashes)})`,
    'group()',
    'keep(columns: ["_time", "_value"])',
    'sort(columns: ["_time"])'
  ].join(PIPE)
}

/**
 * Every point in a window, for the writer's collision check. The writer files points by series
 * and millisecond, so their order does not matter: the tables come series by series, unsorted,
 * and InfluxDB streams them without holding the window in memory. undefined when the window is empty.
 */
export function buildFluxPointsQuery (bucket: string, measurement: string, startMs: number, endMs: number): string | undefined {
  const stages = pointStages(bucket, measurement, startMs, endMs)
  if (stages === undefined) return undefined
  stages.push(KEEP_POINT_COLUMNS)
  return stages.join(PIPE)
}

/** Whether the bucket is there (and readable with the token): one row naming it, or none. */
export function buildFluxBucketQuery (bucket: string): string {
  return ['buckets()', flux`filter(fn: (r) => r.name == ${fluxString(bucket)})`.toString(), 'keep(columns: ["name"])'].join(PIPE)
}
