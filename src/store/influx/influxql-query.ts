import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../../time/rfc3339.js'
import type { EventQuery } from '../event-store.js'
import { indexMeasurementOf } from './message-id-index.js'
import { MAX_PUSHED_ENTITIES } from './pushed-entities.js'
import { encodeTagValue } from './tag-value.js'
import { STAMPS_WINDOW_HOURS, writersMeasurementOf } from './writer-stamps.js'

/** An InfluxQL string literal: only `\` and `'` need escaping (identifiers hold no control characters). */
export function influxqlString (value: string): string {
  return "'" + value.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'"
}

/** An InfluxQL identifier (measurement name). */
export function influxqlIdentifier (name: string): string {
  return '"' + name.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"'
}

function influxqlTime (epochMs: number): string {
  return influxqlString(new Date(Math.min(Math.max(epochMs, EVENT_TIME_MIN_MS), EVENT_TIME_MAX_MS)).toISOString())
}

const COLUMNS = '"message_id", "message_code", "message_category", "device_id", "space_id"'

function anyOf (key: string, values: Iterable<string>, encode: (value: string) => string): string {
  return '(' + [...values].map((value) => `"${key}" = ${influxqlString(encode(value))}`).join(' OR ') + ')'
}

const asIs = (value: string) => value

/** The one statement behind an events request: window, entities and exclusive filter all in WHERE. */
export function buildInfluxQLEventQuery (measurement: string, query: EventQuery): string {
  const conditions = [`time >= ${influxqlTime(query.startMs)}`, `time < ${influxqlTime(query.endMs)}`]
  const { entities } = query
  if (entities !== undefined && entities.deviceIds.size + entities.spaceIds.size <= MAX_PUSHED_ENTITIES) {
    const either = []
    if (entities.deviceIds.size > 0) either.push(anyOf('device_id', entities.deviceIds, encodeTagValue))
    if (entities.spaceIds.size > 0) either.push(anyOf('space_id', entities.spaceIds, encodeTagValue))
    conditions.push(either.length === 1 ? either[0]! : `(${either.join(' OR ')})`)
  }
  if (query.messageIds !== undefined) conditions.push(anyOf('message_id', query.messageIds, asIs))
  if (query.category !== undefined) conditions.push(`"message_category" = ${influxqlString(query.category)}`)
  if (query.messageCodes !== undefined) conditions.push(anyOf('message_code', query.messageCodes, encodeTagValue))
  return `SELECT ${COLUMNS} FROM ${influxqlIdentifier(measurement)} WHERE ${conditions.join(' AND ')} ORDER BY time ASC`
}

/** The index points of some ID hashes (undefined: of all) in a window, in time order (message-id-index.ts). */
export function buildInfluxQLIndexQuery (measurement: string, idHashes: readonly string[] | undefined, startMs: number, endMs: number): string {
  const hashes = idHashes === undefined ? '' : ` AND ${anyOf('id_hash', idHashes, asIs)}`
  return `SELECT "message" FROM ${influxqlIdentifier(indexMeasurementOf(measurement))} WHERE time >= ${influxqlTime(startMs)} AND time < ${influxqlTime(endMs)}${hashes} ORDER BY time ASC`
}

/** Each writer's latest stamp of the last STAMPS_WINDOW_HOURS, a series per writer (writer-stamps.ts). */
export function buildInfluxQLWriterStampsQuery (measurement: string): string {
  return `SELECT last("n") FROM ${influxqlIdentifier(writersMeasurementOf(measurement))} WHERE time > now() - ${STAMPS_WINDOW_HOURS}h GROUP BY "writer"`
}

/** Every point in a window, for the writer's collision check. */
export function buildInfluxQLPointsQuery (measurement: string, startMs: number, endMs: number): string {
  return `SELECT ${COLUMNS} FROM ${influxqlIdentifier(measurement)} WHERE time >= ${influxqlTime(startMs)} AND time < ${influxqlTime(endMs)} ORDER BY time ASC`
}
