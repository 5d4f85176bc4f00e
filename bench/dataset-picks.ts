import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { DAY_MS } from '../src/time/rfc3339.js'

/** The fixed requests' entities, chosen from the data so each scenario asks for a realistic amount. */
export interface DatasetPicks {
  /** A device of median activity over the last 30 days (small: tens of events). */
  device: { id: string, eventsLast30Days: number }
  /** The busiest space over the last 90 days (medium: its devices' events and its own). */
  space: { id: string, eventsLast90Days: number }
  /** Every event of the last 30 days (large). */
  eventsLast30Days: number
  /** Three languages every specification has (specifications scenario). */
  languages: string[]
  /** Five message_ids spread evenly over the whole data set (lookup scenario). */
  messageIds: string[]
}

/** How many message_ids the lookup scenario asks for. */
export const LOOKUP_IDS = 5

interface EventLine {
  message_id: string
  date_time: string
  device_id?: string
  space_id?: string
}

/** Reads the events file once: the number of events and the picks. */
export async function scanDataset (eventsFile: string, specificationsFile: string, endMs: number): Promise<{ events: number, picks: DatasetPicks }> {
  const from30 = endMs - 30 * DAY_MS
  const from90 = endMs - 90 * DAY_MS
  const byDevice = new Map<string, number>()
  const bySpace = new Map<string, number>()
  let events = 0
  let last30 = 0
  // Every thousandth ID, thinned to five evenly spread ones at the end.
  const sampledIds: string[] = []
  const lines = createInterface({ input: createReadStream(eventsFile), crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    events++
    const event = JSON.parse(line) as EventLine
    if (events % 1000 === 1) sampledIds.push(event.message_id)
    const ms = Date.parse(event.date_time)
    if (ms >= endMs || ms < from90) continue
    if (event.space_id !== undefined) bySpace.set(event.space_id, (bySpace.get(event.space_id) ?? 0) + 1)
    if (ms < from30) continue
    last30++
    if (event.device_id !== undefined) byDevice.set(event.device_id, (byDevice.get(event.device_id) ?? 0) + 1)
  }
  // Sorted by count, then ID, so the same data always gives the same picks.
  const devices = [...byDevice].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
  const spaces = [...bySpace].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  const device = devices[Math.floor(devices.length / 2)]
  const space = spaces[0]
  if (device === undefined || space === undefined) throw new Error(`${eventsFile} has no device or space events in its last 30 days`)
  return {
    events,
    picks: {
      device: { id: device[0], eventsLast30Days: device[1] },
      space: { id: space[0], eventsLast90Days: space[1] },
      eventsLast30Days: last30,
      languages: await commonLanguages(specificationsFile),
      messageIds: Array.from({ length: LOOKUP_IDS }, (_, i) => sampledIds[Math.floor((i + 0.5) * sampledIds.length / LOOKUP_IDS)]!)
    }
  }
}

async function commonLanguages (specificationsFile: string): Promise<string[]> {
  const specifications = JSON.parse(await readFile(specificationsFile, 'utf8')) as Array<{ details: Array<{ language: string }> }>
  const first = specifications[0]?.details.map((detail) => detail.language) ?? []
  const common = first.filter((language) => specifications.every((spec) => spec.details.some((detail) => detail.language === language)))
  if (common.length < 3) throw new Error(`${specificationsFile}: fewer than three languages are common to every specification`)
  return common.slice(0, 3)
}
