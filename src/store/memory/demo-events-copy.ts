import { open, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { DataFileError } from '../../data/data-file-error.js'
import { parseEventLine } from '../../data/event-lines.js'
import { DAY_MS, formatEventTime } from '../../time/rfc3339.js'

/**
 * The bundled demo events follow the clock. Its working copy (the memory store's events file when
 * EVENTS_FILE is unset) is made with every date_time moved by one whole number of days, so that
 * the last event falls on the day before today (UTC): the demo's period is the days just before
 * today, and a window such as "the last 7 days" answers events whatever the day. Everything else
 * is kept: message_ids, fields, the order of the lines, and each event's time of day and distance
 * to the others (weekdays move with the shift, so the quieter weekend days fall on other days).
 *
 * A copy that already exists is kept as it is, even one made on an earlier day: events ingested
 * into the demo are appended to it (and a running provider may be appending to it), so making it
 * again would lose them. Its period then ends further back each day; the provider says so at
 * start-up, and deleting `var/` (`rm -r var`) makes a fresh copy, ending yesterday, at the next
 * start or ingest.
 */

/** The whole days to add to the demo's events so that an event at lastEventMs falls on the day before nowMs's (UTC). */
export function demoShiftDays (lastEventMs: number, nowMs: number): number {
  return Math.floor(nowMs / DAY_MS) - 1 - Math.floor(lastEventMs / DAY_MS)
}

export interface DemoEventsCopy {
  /** Days added to every date_time. */
  shiftDays: number
  events: number
  /** The first and last date_time of the copy (undefined for an empty file). */
  firstDateTime: string | undefined
  lastDateTime: string | undefined
}

/**
 * Reads the seed's events (the bundled demo: small enough to hold), checked as the loader checks
 * them (a bad line names the seed file and the line); undefined for a blank line.
 */
async function readSeed (seedFile: string) {
  const lines = (await readFile(seedFile, 'utf8')).split('\n')
  if (lines.at(-1) === '') lines.pop()
  const events = lines.map((text, index) => {
    const parsed = parseEventLine(text.endsWith('\r') ? text.slice(0, -1) : text, index + 1)
    if (parsed !== undefined && 'problem' in parsed) throw new DataFileError(seedFile, `line ${parsed.line}`, parsed.problem)
    return parsed?.event
  })
  return events
}

/**
 * Writes the working copy of the demo's seed file to copyFile, moved to end yesterday (see
 * above). It is written beside copyFile and renamed over it, so a copy is never seen half made
 * (workers of a cluster starting together each make their own, identical, and rename it).
 */
export async function makeDemoEventsCopy (seedFile: string, copyFile: string, nowMs: number): Promise<DemoEventsCopy> {
  const events = await readSeed(seedFile)
  let firstMs = Number.POSITIVE_INFINITY
  let lastMs = Number.NEGATIVE_INFINITY
  for (const event of events) {
    if (event === undefined) continue
    firstMs = Math.min(firstMs, event.epochMs)
    lastMs = Math.max(lastMs, event.epochMs)
  }
  const count = events.filter((event) => event !== undefined).length
  const shiftDays = count === 0 ? 0 : demoShiftDays(lastMs, nowMs)
  const shiftMs = shiftDays * DAY_MS
  // Blank lines stay, so line numbers in messages about the copy are the seed's.
  const text = events.map((event) => event === undefined
    ? '\n'
    : JSON.stringify({ ...event.message, date_time: formatEventTime(event.epochMs + shiftMs) }) + '\n').join('')

  const partial = `${copyFile}.${process.pid}.partial`
  try {
    await writeFile(partial, text)
    await rename(partial, copyFile)
  } catch (error) {
    await rm(partial, { force: true })
    throw error
  }
  return {
    shiftDays,
    events: count,
    firstDateTime: count === 0 ? undefined : formatEventTime(firstMs + shiftMs),
    lastDateTime: count === 0 ? undefined : formatEventTime(lastMs + shiftMs)
  }
}

/**
 * How many days behind the clock an existing working copy is: the shift a copy made now would
 * have, less the shift this one was made with (read from its first event, which it shares with
 * the seed; events are only ever appended). 0 for a copy of today; undefined when the copy does
 * not start with the seed's first event (not a copy of this seed) or cannot be read.
 */
export async function demoCopyDaysBehind (seedFile: string, copyFile: string, nowMs: number): Promise<number | undefined> {
  try {
    const events = (await readSeed(seedFile)).filter((event) => event !== undefined)
    const first = events[0]
    if (first === undefined) return undefined
    const copied = await firstEventOf(copyFile)
    if (copied?.message.message_id !== first.message.message_id) return undefined
    const lastMs = events.reduce((last, event) => Math.max(last, event.epochMs), Number.NEGATIVE_INFINITY)
    const madeWith = Math.round((copied.epochMs - first.epochMs) / DAY_MS)
    return demoShiftDays(lastMs, nowMs) - madeWith
  } catch {
    return undefined
  }
}

/** The first event of an events file, reading only its beginning (an ingested-into copy can be large). */
async function firstEventOf (file: string) {
  const handle = await open(file, 'r')
  try {
    const buffer = Buffer.alloc(64 * 1024)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    const lines = buffer.toString('utf8', 0, bytesRead).split('\n')
    for (const [index, text] of lines.entries()) {
      if (index === lines.length - 1 && bytesRead === buffer.length) break
      const parsed = parseEventLine(text.endsWith('\r') ? text.slice(0, -1) : text, index + 1)
      if (parsed === undefined) continue
      return 'event' in parsed ? parsed.event : undefined
    }
    return undefined
  } finally {
    await handle.close()
  }
}
