import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BASE_CODE_COUNT, buildCatalog } from './catalog.js'
import { DAY_MS } from './daily-rhythm.js'
import { planMoves, spaceAt } from './device-moves.js'
import { buildEntitiesFile } from './entities-file.js'
import { writeEventsFile } from './event-simulation.js'
import { Random } from './random.js'
import { buildLayout } from './site-layout.js'

export interface DatasetOptions {
  devices: number
  spaces: number
  days: number
  /** How many message codes the catalog holds. */
  codes: number
  seed: number
  /** The exclusive end of the period, in milliseconds since the epoch; it starts `days` days earlier. */
  endMs: number
  /** Average events per entity (device or space) per day. */
  rate: number
  /** The folder to write into; created when missing. */
  outDir: string
  /** Chance per device per day of being moved to another space. */
  moveChancePerDay?: number
}

/** Rare: about one device in ten moves in a year. */
export const DEFAULT_MOVE_CHANCE_PER_DAY = 0.0003

export const DATASET_FILES = {
  events: 'events.ndjson',
  entities: 'entities.json',
  specifications: 'specifications.json'
} as const

export interface DatasetSummary {
  events: number
  devices: number
  spaces: number
  tags: number
  codes: number
  /** Devices moved to another space during the period (a device moving twice counts twice). */
  moves: number
  startMs: number
  endMs: number
}

/**
 * The options of the bundled demo data (data/README.md's command). Its events keep the
 * message_ids the generator drew from the seed alone before IDs depended on the options, so
 * data/ stays what that command writes and events already ingested from it keep their identity.
 */
const BUNDLED_DEMO_OPTIONS = {
  devices: 120,
  spaces: 24,
  days: 90,
  codes: BASE_CODE_COUNT,
  seed: 1,
  endMs: Date.UTC(2026, 10, 1),
  rate: 0.35,
  moveChancePerDay: DEFAULT_MOVE_CHANCE_PER_DAY
}

/**
 * What every message_id of a data set is keyed with (Random.uuid7; the bundled demo's version 4
 * IDs, Random.uuid, the same way): four words of a SHA-256 of every option that shapes the data
 * (not outDir). The event stream draws the same numbers for every set of one seed, so unkeyed IDs
 * of two sets of one seed coincide wherever their draws line up (a set of the default seed shared
 * 1,148 with data/); keyed by different options their 74 random bits are unrelated, and the same
 * options give the same set, IDs included. Undefined (unkeyed) for the bundled demo's options only.
 */
export function messageIdKey (options: Omit<DatasetOptions, 'outDir'>): number[] | undefined {
  const shape = {
    devices: options.devices,
    spaces: options.spaces,
    days: options.days,
    codes: options.codes,
    seed: options.seed,
    endMs: options.endMs,
    rate: options.rate,
    moveChancePerDay: options.moveChancePerDay ?? DEFAULT_MOVE_CHANCE_PER_DAY
  }
  const text = JSON.stringify(shape)
  if (text === JSON.stringify(BUNDLED_DEMO_OPTIONS)) return undefined
  const digest = createHash('sha256').update(`message_id ${text}`).digest()
  return [0, 4, 8, 12].map((offset) => digest.readUInt32BE(offset))
}

/**
 * Writes a demo data set (events, entities, specifications) into options.outDir. The same options
 * give the same bytes: every random choice comes from streams seeded by options.seed, one per
 * purpose, so the layout does not change when only the period or the event rate does. Message
 * IDs depend on every option too (messageIdKey), so two different sets never share one.
 */
export async function generateDataset (options: DatasetOptions): Promise<DatasetSummary> {
  const { outDir, seed, endMs, days } = options
  const startMs = endMs - days * DAY_MS
  const catalog = buildCatalog(options.codes)
  const layout = buildLayout(Random.stream(seed, 'layout'), options.spaces, options.devices)
  const moves = planMoves(Random.stream(seed, 'moves'), layout, startMs, endMs, options.moveChancePerDay ?? DEFAULT_MOVE_CHANCE_PER_DAY)
  const finalSpaces = layout.devices.map((device, index) => spaceAt(device.space, moves[index]!, Infinity))
  const entities = buildEntitiesFile(layout, finalSpaces)

  await mkdir(outDir, { recursive: true })
  await writeFile(join(outDir, DATASET_FILES.specifications), JSON.stringify(catalog.specifications, null, 2) + '\n')
  await writeFile(join(outDir, DATASET_FILES.entities), JSON.stringify(entities, null, 2) + '\n')
  const events = await writeEventsFile(join(outDir, DATASET_FILES.events), {
    catalog, layout, moves, startMs, days, rate: options.rate, idKey: messageIdKey(options)
  }, Random.stream(seed, 'events'))

  return {
    events,
    devices: entities.devices.length,
    spaces: entities.spaces.length,
    tags: entities.tags.length,
    codes: catalog.specifications.length,
    moves: moves.reduce((sum, list) => sum + list.length, 0),
    startMs,
    endMs
  }
}
