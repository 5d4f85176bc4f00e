import { join } from 'node:path'
import { Type } from '@sinclair/typebox'
import { demoDataDir } from '../../project-root.js'
import { defineStore } from '../store-descriptor.js'
import { collectLoadGarbage } from './collect-load-garbage.js'
import { loadMemoryEventStore } from './load-memory-store.js'
import { MemoryEventWriter } from './memory-event-writer.js'

export interface MemorySettings {
  eventsFile: string
}

/** STORE=memory: every event of EVENTS_FILE in memory, loaded at start-up. */
export const memoryStore = defineStore({
  name: 'memory',
  environment: Type.Object({
    EVENTS_FILE: Type.Optional(Type.String({ description: 'the path of an NDJSON events file', pattern: '\\S' }))
  }),
  settings: (env): MemorySettings => ({ eventsFile: env.EVENTS_FILE ?? join(demoDataDir, 'events.ndjson') }),
  describe: (settings) => `the memory store's events file ${settings.eventsFile}`,
  async open (settings, { log }) {
    const started = performance.now()
    const store = await loadMemoryEventStore(settings.eventsFile, ({ lines, seconds }) => {
      log.info({ file: settings.eventsFile, lines, seconds: Math.round(seconds) }, 'loading events')
    })
    const collected = collectLoadGarbage()
    const seconds = Math.round((performance.now() - started) / 100) / 10
    log.info({ file: settings.eventsFile, events: store.size, seconds, loadGarbageCollected: collected }, 'events loaded into the memory store')
    return store
  },
  openWriter: (settings) => new MemoryEventWriter(settings.eventsFile)
})
