import { nanosecondsOf } from './event-point.js'
import { measurementName, tagText } from './line-protocol.js'

/**
 * Writer stamps: every request that writes events or index points carries one more point, in
 * the measurement `<measurement>_writers`: tag `writer` (one ID per writing process), field `n`
 * (how many requests that writer has made), at the start of the writer's current hour (one point
 * per writer and hour, overwritten by each request; it ages out with the retention policy like
 * any other). A process that trusts what it knows of the index (KnownEvents) reads the stamps
 * before each batch: one another writer changed since it started reading the index means the
 * index holds events it never saw, and from then on it looks every batch up.
 */
export const WRITERS_SUFFIX = '_writers'

/** How far back the stamps are read: writers' clocks may be up to this far behind influxd's. */
export const STAMPS_WINDOW_HOURS = 24

const HOUR_MS = 3_600_000

export function writersMeasurementOf (measurement: string): string {
  return measurement + WRITERS_SUFFIX
}

export function writerStampLine (measurement: string, writer: string, requests: number, nowMs: number): string {
  return `${measurementName(writersMeasurementOf(measurement))},writer=${tagText(writer)} n=${requests}i ${nanosecondsOf(nowMs - (nowMs % HOUR_MS), 0)}`
}

/** Each writer's latest stamp in the window, as "<time> <n>". */
export type WriterStamps = ReadonlyMap<string, string>

/** The first writer other than `self` whose stamp is not what it was in `before`; undefined when none. */
export function otherWriterSince (before: WriterStamps, now: WriterStamps, self: string): string | undefined {
  for (const [writer, stamp] of now) {
    if (writer !== self && before.get(writer) !== stamp) return writer
  }
  return undefined
}
