import { copyFile, mkdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Type } from '@sinclair/typebox'
import { demoDataDir, projectRoot } from '../../project-root.js'
import { defineStore } from '../store-descriptor.js'
import { collectLoadGarbage } from './collect-load-garbage.js'
import { loadMemoryEventStore } from './load-memory-store.js'
import { MemoryEventWriter } from './memory-event-writer.js'

export interface MemorySettings {
  eventsFile: string
  /**
   * Without EVENTS_FILE: the bundled demo events, copied to `eventsFile` the first time, so
   * ingests append to a working copy and never to the project's own data/events.ndjson.
   */
  seedFile: string | undefined
}

/** The events file of the demo (no EVENTS_FILE): a working copy, outside version control. */
export const DEMO_EVENTS_FILE = join(projectRoot, 'var', 'events.ndjson')

async function seeded (settings: MemorySettings): Promise<string> {
  if (settings.seedFile !== undefined && !existsSync(settings.eventsFile)) {
    await mkdir(dirname(settings.eventsFile), { recursive: true })
    await copyFile(settings.seedFile, settings.eventsFile)
  }
  return settings.eventsFile
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
    const started = performance.now()
    const file = await seeded(settings)
    const store = await loadMemoryEventStore(file, ({ lines, seconds }) => {
      log.info({ file, lines, seconds: Math.round(seconds) }, 'loading events')
    })
    const collected = collectLoadGarbage()
    const seconds = Math.round((performance.now() - started) / 100) / 10
    log.info({ file, events: store.size, seconds, loadGarbageCollected: collected }, 'events loaded into the memory store')
    return store
  },
  openWriter: (settings) => new MemoryEventWriter(settings.eventsFile, async () => { await seeded(settings) })
})
