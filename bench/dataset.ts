import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { log } from './log.js'
import type { DatasetSize, Profile } from './options.js'
import { startChild, waitForExit } from './processes.js'
import { scanDataset, type DatasetPicks } from './dataset-picks.js'

import { DAY_MS } from '../src/time/rfc3339.js'

export { DAY_MS }

/** A generated data set on disk, with the entities and languages the scenarios ask for. */
export interface Dataset {
  key: string
  dir: string
  size: DatasetSize
  /** The exclusive end of the period (today 00:00Z when generated). */
  endMs: number
  eventsFile: string
  entitiesFile: string
  specificationsFile: string
  events: number
  picks: DatasetPicks
  /** True when an earlier run's files were used. */
  reused: boolean
  generateSeconds: number | undefined
}

/** Says which options made the files in its folder; a data set is reused only when they match. */
interface Manifest {
  profile: string
  options: DatasetSize & { end: string }
  /** The generator's kind of message_id (absent: a manifest of an older benchmark, whose data set is made again). */
  messageIdKind?: typeof MESSAGE_ID_KIND
  events: number
  picks: DatasetPicks
  generateSeconds: number
  createdAt: string
}

const MANIFEST = 'manifest.json'

/**
 * The generator's message_ids (src/demo/random.ts, uuid7): a data set of an older generator
 * (version 4 IDs) is made again, not reused, as its answers would compress otherwise.
 */
const MESSAGE_ID_KIND = 'uuid7'

export function todayStartMs (nowMs = Date.now()): number {
  return Math.floor(nowMs / DAY_MS) * DAY_MS
}

function datasetKey (profile: Profile, endMs: number): string {
  const { devices, spaces, codes, days, seed } = profile.dataset
  const day = new Date(endMs).toISOString().slice(0, 10)
  return `${profile.name}-d${devices}-s${spaces}-c${codes}-days${days}-seed${seed}-end${day}`
}

async function readManifest (dir: string): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest
  } catch {
    return undefined
  }
}

function sameOptions (manifest: Manifest, profile: Profile, endMs: number): boolean {
  const wanted = { ...profile.dataset, end: new Date(endMs).toISOString() }
  const { devices, spaces, codes, days, seed, end } = manifest.options
  if (manifest.messageIdKind !== MESSAGE_ID_KIND) return false
  return JSON.stringify({ devices, spaces, codes, days, seed, end }) === JSON.stringify(wanted)
}

/**
 * The profile's data set ending today 00:00Z: reused from dataRoot when its manifest says the same
 * options and end day, otherwise generated with the project's generator (src/cli/generate.ts).
 * Data sets of the same profile for other days are removed, so daily runs do not pile up.
 */
export async function ensureDataset (dataRoot: string, profile: Profile, endMs = todayStartMs()): Promise<Dataset> {
  const key = datasetKey(profile, endMs)
  const dir = join(dataRoot, key)
  const files = {
    eventsFile: join(dir, 'events.ndjson'),
    entitiesFile: join(dir, 'entities.json'),
    specificationsFile: join(dir, 'specifications.json')
  }
  await removeStaleDatasets(dataRoot, profile, key)

  const manifest = await readManifest(dir)
  if (manifest !== undefined && sameOptions(manifest, profile, endMs) && Object.values(files).every((file) => existsSync(file))) {
    log(`data set ${key}: reusing ${manifest.events} events`)
    let picks = manifest.picks
    if (picks.messageIds === undefined) {
      // Picked by an older benchmark: the data is the same, the picks are read again.
      picks = (await scanDataset(files.eventsFile, files.specificationsFile, endMs)).picks
      await writeFile(join(dir, MANIFEST), JSON.stringify({ ...manifest, picks }, null, 2) + '\n')
    }
    return { key, dir, size: profile.dataset, endMs, ...files, events: manifest.events, picks, reused: true, generateSeconds: undefined }
  }

  // Anything there is partial or of other options (an InfluxDB database too): start afresh.
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const { devices, spaces, codes, days, seed } = profile.dataset
  const args = ['--devices', devices, '--spaces', spaces, '--codes', codes, '--days', days, '--seed', seed]
    .map(String).concat(['--end', new Date(endMs).toISOString(), '--out', dir])
  log(`data set ${key}: generating (${devices} devices, ${spaces} spaces, ${codes} codes, ${days} days)`)
  const started = performance.now()
  const child = startChild(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'cli', 'generate.ts'), ...args], { cwd: projectRoot })
  const code = await waitForExit(child)
  if (code !== 0) throw new Error(`the generator failed (${code}): ${child.output()}`)
  const generateSeconds = (performance.now() - started) / 1000

  const scanned = await scanDataset(files.eventsFile, files.specificationsFile, endMs)
  const written: Manifest = {
    profile: profile.name,
    options: { ...profile.dataset, end: new Date(endMs).toISOString() },
    messageIdKind: MESSAGE_ID_KIND,
    events: scanned.events,
    picks: scanned.picks,
    generateSeconds,
    createdAt: new Date().toISOString()
  }
  await writeFile(join(dir, MANIFEST), JSON.stringify(written, null, 2) + '\n')
  log(`data set ${key}: ${scanned.events} events generated in ${generateSeconds.toFixed(1)} s`)
  return { key, dir, size: profile.dataset, endMs, ...files, events: scanned.events, picks: scanned.picks, reused: false, generateSeconds }
}

async function removeStaleDatasets (dataRoot: string, profile: Profile, keep: string): Promise<void> {
  let entries: string[]
  try {
    entries = await readdir(dataRoot)
  } catch {
    return
  }
  for (const entry of entries) {
    if (entry === keep || !entry.startsWith(`${profile.name}-`)) continue
    const manifest = await readManifest(join(dataRoot, entry))
    if (manifest?.profile !== profile.name) continue
    log(`removing the data set of another day or size: ${entry}`)
    await rm(join(dataRoot, entry), { recursive: true, force: true })
  }
}
