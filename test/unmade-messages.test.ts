import t from 'tap'
import fc from 'fast-check'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import type { EventQuery } from '../src/store/event-store.js'

/**
 * The memory store keeps a loaded event in the plain wire form as its bytes, and makes its message
 * object the first time an answer reads it (then keeps it). A filter on message codes or category
 * is checked from the bytes of an event not made yet, so a scan makes the messages of the events
 * it answers only: a year's scan for a rare code made and kept every event's message, holding the
 * event loop 2.4 s on a million events.
 */
t.test('a scan for message codes or a category makes the messages of the events it answers, no others', async (t) => {
  let made = 0
  const wireLine = await import('../src/data/wire-line.js')
  const { loadMemoryEventStore } = await t.mockImport<typeof import('../src/store/memory/load-memory-store.js')>('../src/store/memory/load-memory-store.js', {
    '../src/data/wire-line.ts': { ...wireLine, messageOfWireJson: (...args: Parameters<typeof wireLine.messageOfWireJson>) => { made++; return wireLine.messageOfWireJson(...args) } }
  })
  const T0 = Date.UTC(2025, 0, 1)
  const codes = ['COMMON_A', 'COMMON_B', 'RARE']
  const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({
    message_id: `m-${String(i).padStart(5, '0')}`,
    message_code: i % 500 === 7 ? 'RARE' : codes[i % 2],
    message_category: i % 3 === 0 ? 'notification' : 'alert',
    date_time: new Date(T0 + i * 1000).toISOString(),
    device_id: `d-${i % 10}`,
    space_id: 's-1'
  }))
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, lines.join('\n') + '\n')
  let store = await loadMemoryEventStore(file)
  const ids = (query: Partial<EventQuery>): string[] => {
    const found: string[] = []
    for (const batch of store.queryEvents({ startMs: T0, endMs: T0 + 3000 * 1000, entities: undefined, ...query } as EventQuery) as Iterable<{ messages: ReadonlyArray<{ message_id: string }> }>) for (const message of batch.messages) found.push(message.message_id)
    return found
  }
  made = 0
  const rare = ids({ messageCodes: new Set(['RARE', 'NOWHERE', 'ÜNICODE']) })
  t.same(rare, ['m-00007', 'm-00507', 'm-01007', 'm-01507', 'm-02007', 'm-02507'])
  t.equal(made, 6, 'six messages made for six events answered, of 3,000 scanned')
  made = 0
  t.same(ids({ messageCodes: new Set(['RARE']) }), rare)
  t.equal(made, 0, 'made once, kept')
  store = await loadMemoryEventStore(file)
  made = 0
  const notifications = ids({ category: 'notification', entities: { deviceIds: new Set(['d-3']), spaceIds: new Set() } })
  t.same(notifications, lines.map((line) => JSON.parse(line)).filter((event, i) => event.device_id === 'd-3' && i % 3 === 0).map((event) => event.message_id))
  t.equal(made, notifications.length, 'a device\'s notifications: its alerts left unmade')
  store = await loadMemoryEventStore(file)
  made = 0
  // Six devices of ten: their events together are most of the window, which is walked whole.
  const devices = new Set(['d-0', 'd-1', 'd-2', 'd-3', 'd-4', 'd-5'])
  const ofDevices = ids({ entities: { deviceIds: devices, spaceIds: new Set() } })
  t.equal(ofDevices.length, 1800)
  t.equal(made, 1800, 'the window walked, the other devices\' events left unmade')
})

t.test('WireExclusiveFilter tells from the bytes exactly what the message check tells', async (t) => {
  const { WireExclusiveFilter, scanWireLine } = await import('../src/data/wire-line.js')
  const { encodeMessage } = await import('../src/store/message-json.js')
  const code = fc.oneof(fc.constantFrom('A', 'AB', 'ABC', 'B', 'DISP_LOW', 'DISP_LOW_LEVEL', 'x y'), fc.stringMatching(/^[A-Z_]{1,6}$/))
  await fc.assert(fc.property(
    fc.record({ id: fc.stringMatching(/^[a-z0-9-]{1,40}$/), code, alert: fc.boolean(), device: fc.boolean() }),
    fc.oneof(
      fc.record({ codes: fc.uniqueArray(fc.oneof(code, fc.constantFrom('Ü', 'ÄB')), { minLength: 1, maxLength: 12 }) }),
      fc.record({ category: fc.constantFrom('alert' as const, 'notification' as const) })
    ),
    fc.nat(20),
    ({ id, code, alert, device }, filter, at) => {
      const message = { message_id: id, message_code: code, message_category: alert ? 'alert' as const : 'notification' as const, date_time: '2025-03-01T10:00:00.000Z', ...(device ? { device_id: 'd-1' } : {}), space_id: 's-1' }
      const json = encodeMessage(message)
      const bytes = Buffer.concat([Buffer.alloc(at, 0x7b), Buffer.from(json), Buffer.from('\n{"message_id":"')])
      if (scanWireLine(bytes, at, at + json.length) === undefined) throw new Error(`${json} is not in wire form`)
      const codes = 'codes' in filter ? new Set(filter.codes) : undefined
      const category = 'category' in filter ? filter.category : undefined
      const expected = (codes === undefined || codes.has(code)) && (category === undefined || category === message.message_category)
      if (WireExclusiveFilter.of(codes, category)!.mayMatch(bytes, at) !== expected) throw new Error(`${json} against ${JSON.stringify(filter)}: ${String(!expected)}`)
    }), { numRuns: 20000 })
  t.equal(WireExclusiveFilter.of(undefined, undefined), undefined, 'no filter at all')
})

t.test('codes or a category without entities are answered from an index of them, built once per segment: only the events they name are looked at', async (t) => {
  // Before: every event of the window was looked at (its bytes read), 120–160 ms a year of a
  // million events for a rare code, every time.
  let looked = 0
  const { WireExclusiveFilter } = await import('../src/data/wire-line.js')
  const { loadMemoryEventStore } = await import('../src/store/memory/load-memory-store.js')
  const mayMatch = WireExclusiveFilter.prototype.mayMatch
  WireExclusiveFilter.prototype.mayMatch = function (bytes: Buffer, start: number): boolean {
    looked++
    return mayMatch.call(this, bytes, start)
  }
  t.teardown(() => { WireExclusiveFilter.prototype.mayMatch = mayMatch })
  const T0 = Date.UTC(2025, 0, 1)
  const events = Array.from({ length: 3000 }, (_, i) => ({
    message_id: `m-${String(i).padStart(5, '0')}`,
    message_code: i % 500 === 7 ? 'RARE' : i % 2 === 0 ? 'COMMON_A' : 'COMMON_B',
    message_category: i % 3 === 0 ? 'notification' : 'alert',
    date_time: new Date(T0 + i * 1000).toISOString(),
    device_id: `d-${i % 10}`,
    space_id: 's-1'
  }))
  const file = join(t.testdir(), 'events.ndjson')
  writeFileSync(file, events.map((event) => JSON.stringify(event)).join('\n') + '\n')
  const store = await loadMemoryEventStore(file)
  const ids = (query: Partial<EventQuery>): string[] => {
    const found: string[] = []
    for (const batch of store.queryEvents({ startMs: T0, endMs: T0 + 3000 * 1000, entities: undefined, ...query } as EventQuery) as Iterable<{ messages: ReadonlyArray<{ message_id: string }> }>) for (const message of batch.messages) found.push(message.message_id)
    return found
  }
  const expected = (keep: (event: typeof events[number], i: number) => boolean) => events.filter(keep).map((event) => event.message_id)
  for (const round of [1, 2]) {
    looked = 0
    t.same(ids({ messageCodes: new Set(['RARE', 'NOWHERE']) }), expected((event) => event.message_code === 'RARE'), `round ${round}`)
    t.ok(looked <= 6, `the six RARE events looked at, no others: ${looked}`)
    looked = 0
    t.same(ids({ messageCodes: new Set(['RARE']), startMs: T0 + 600 * 1000, endMs: T0 + 2100 * 1000 }), ['m-01007', 'm-01507', 'm-02007'], 'a window of them')
    t.ok(looked <= 3, `${looked} looked at`)
    looked = 0
    t.same(ids({ category: 'notification', startMs: T0 + 1000 * 1000 }), expected((event, i) => i >= 1000 && event.message_category === 'notification'))
    t.ok(looked <= 667, `the window's notifications looked at only: ${looked}`)
    looked = 0
    t.same(ids({ messageCodes: new Set(['COMMON_A', 'RARE']) }), expected((event) => event.message_code === 'COMMON_A' || event.message_code === 'RARE'), 'two codes, merged in order')
  }
})
