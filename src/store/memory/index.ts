import { mkdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Type } from '@sinclair/typebox'
import { demoDataDir, projectRoot } from '../../project-root.js'
import { defineStore, type StoreLog } from '../store-descriptor.js'
import { collectLoadGarbage } from './collect-load-garbage.js'
import { demoCopyDaysBehind, makeDemoEventsCopy } from './demo-events-copy.js'
import { countExternalMemoryInHeapLimit } from './external-memory-gc.js'
import { loadMemoryEventStore } from './load-memory-store.js'
import { MemoryEventWriter } from './memory-event-writer.js'

export interface MemorySettings {
  eventsFile: string
  /**
   * Without EVENTS_FILE: the bundled demo events, copied to `eventsFile` the first time (moved
   * in time to end yesterday, see demo-events-copy.ts), so ingests append to a working copy and
   * never to the project's own data/events.ndjson.
   */
  seedFile: string | undefined
}

/** The events file of the demo (no EVENTS_FILE): a working copy, outside version control. */
export const DEMO_EVENTS_FILE = join(projectRoot, 'var', 'events.ndjson')

/**
 * The events file, made first when it is the demo's working copy and missing. An existing copy
 * is kept even when made on an earlier day (events ingested since live in it): the log says how
 * far behind it is and that deleting var/ makes a fresh one.
 */
async function seeded (settings: MemorySettings, log?: StoreLog): Promise<string> {
  const { seedFile, eventsFile } = settings
  if (seedFile === undefined) return eventsFile
  if (!existsSync(eventsFile)) {
    await mkdir(dirname(eventsFile), { recursive: true })
    const copy = await makeDemoEventsCopy(seedFile, eventsFile, Date.now())
    log?.info({ file: eventsFile, from: seedFile, ...copy }, 'the demo events, moved in time to end yesterday (UTC), copied to their working file')
  } else if (log !== undefined) {
    const behind = await demoCopyDaysBehind(seedFile, eventsFile, Date.now())
    if (behind !== undefined && behind > 0) {
      log.info({ file: eventsFile, daysBehind: behind },
        `the demo events in their working file end ${behind} day(s) before yesterday (it was made on an earlier day); ` +
        'it is kept (events ingested since are in it): delete var/ to make a fresh copy ending yesterday')
    }
  }
  return eventsFile
}

/** STORE=memory: every event of EVENTS_FILE in memory, loaded at start-up; ingests append to it. */
export const memoryStore = defineStore({
  name: 'memory',
  environment: Type.Object({
    EVENTS_FILE: Type.Optional(Type.String({ description: 'the path of an NDJSON events file', pattern: '\\S' }))
  }),
  settings: (env): MemorySettings => env.EVENTS_FILE === undefined
    ? { eventsFile: DEMO_EVENTS_FILE, seedFile: join(demoDataDir, 'events.ndjson') }
    : { eventsFile: env.EVENTS_FILE, seedFile: undefined },
  describe: (settings) => `the memory store's events file ${settings.eventsFile}`,
  async open (settings, { log }) {
    // Before the load: the heap this store fills is what makes a full collection costly.
    countExternalMemoryInHeapLimit()
    const started = performance.now()
    const file = await seeded(settings, log)
    const store = await loadMemoryEventStore(file, ({ lines, seconds }) => {
      log.info({ file, lines, seconds: Math.round(seconds) }, 'loading events')
    })
    if (store.tornTail !== undefined) {
      log.warn({ file, line: store.tornTail.line, bytes: store.tornTail.bytes }, 'the events file ends with a line cut short (an append a crash interrupted, never acknowledged): skipped, and cut off before the next append')
    }
    const collected = collectLoadGarbage()
    const seconds = Math.round((performance.now() - started) / 100) / 10
    log.info({ file, events: store.size, seconds, loadGarbageCollected: collected }, 'events loaded into the memory store')
    // Not waited for: built in turns while the provider starts and serves (it only reads the
    // loaded events).
    store.indexInTurns().catch((error: unknown) => { log.warn({ err: error }, 'the code and category indexes could not be built ahead') })
    return store
  },
  openWriter: (settings) => new MemoryEventWriter(settings.eventsFile, async () => { await seeded(settings) })
})
