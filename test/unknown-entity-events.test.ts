import t from 'tap'
import { join } from 'node:path'
import { loadEntityRegistry } from '../src/registry/load-entities.js'
import { EntityRegistry } from '../src/registry/entity-registry.js'
import type { EventStore } from '../src/store/event-store.js'
import { loadMemoryEventStore } from '../src/store/memory/load-memory-store.js'
import { countUnknownEntityEvents, warnOfUnknownEntityEvents } from '../src/store/unknown-entity-events.js'
import { fixturesDir } from './helper.js'

function recordingLog () {
  const entries: { level: string, details: object, message: string }[] = []
  return {
    entries,
    info: (details: object, message: string) => { entries.push({ level: 'info', details, message }) },
    warn: (details: object, message: string) => { entries.push({ level: 'warn', details, message }) }
  }
}

t.test('the fixtures\' events of a ghost device and a ghost space are counted and warned of once', async (t) => {
  const store = await loadMemoryEventStore(join(fixturesDir, 'events.ndjson'))
  const registry = await loadEntityRegistry(join(fixturesDir, 'entities.json'))
  const log = recordingLog()
  const unknown = warnOfUnknownEntityEvents(store, registry, log)
  t.same(unknown, { events: 2, devices: 1, spaces: 1, exampleDeviceIds: ['ghost-device'], exampleSpaceIds: ['ghost-space'] })
  t.equal(log.entries.length, 1)
  t.match(log.entries[0], { level: 'warn', details: unknown, message: /^2 stored events belong to devices or spaces the registry \(ENTITIES_FILE\) does not know/ })
})

t.test('a device event is judged by its device, a space event by its space; examples are capped', async (t) => {
  const registry = new EntityRegistry({ devices: [{ id: 'd', space_id: 's' }], spaces: [{ id: 's' }], tags: [] })
  const messages = [
    { device_id: 'd', space_id: 'elsewhere' }, // a known device in an unknown space is served
    { space_id: 's' },
    ...Array.from({ length: 8 }, (_, i) => ({ device_id: `ghost-${i}`, space_id: 's' })),
    { device_id: 'ghost-0', space_id: 's' },
    { space_id: 'void' }
  ]
  t.same(countUnknownEntityEvents(messages, registry, 3), { events: 10, devices: 8, spaces: 1, exampleDeviceIds: ['ghost-0', 'ghost-1', 'ghost-2'], exampleSpaceIds: ['void'] })
})

t.test('nothing to say: every entity known, or a store that does not hold its events', async (t) => {
  const registry = new EntityRegistry({ devices: [], spaces: [{ id: 's' }], tags: [] })
  const log = recordingLog()
  const known = { storedEntities: () => [{ space_id: 's' }] } as unknown as EventStore
  t.match(warnOfUnknownEntityEvents(known, registry, log), { events: 0 })
  t.equal(warnOfUnknownEntityEvents({ kind: 'elsewhere' } as unknown as EventStore, registry, log), undefined)
  t.same(log.entries, [], 'no log line')
})
