import t from 'tap'
import { join } from 'node:path'
import { serverOptions } from '../src/app.js'
import { loadMemoryEventStore, type LoadProgress } from '../src/store/memory/load-memory-store.js'
import { build, fixturesDir, testConfig } from './helper.js'

t.test('loading the memory store is bounded by no framework timeout', async (t) => {
  // Fastify's default (10 s) stopped a million-event start on a busy machine with FST_ERR_PLUGIN_TIMEOUT.
  t.equal(serverOptions(testConfig()).pluginTimeout, 0)
})

t.test('a load reports its progress as it reads', async (t) => {
  const reports: LoadProgress[] = []
  const store = await loadMemoryEventStore(join(fixturesDir, 'events.ndjson'), (progress) => reports.push(progress), 5)
  t.same(reports.map((report) => report.lines), [5, 10, 15, 20], 'every 5 lines of the 21-line fixture')
  t.ok(reports.every((report) => report.seconds >= 0))
  t.equal(store.size, 21)
})

t.test('a file in any order and any line form loads as the same store as its events in wire form', async (t) => {
  const fc = (await import('fast-check')).default
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { encodeMessage } = await import('../src/store/message-json.js')
  const { MemoryEventStore } = await import('../src/store/memory/memory-event-store.js')
  const dir = await mkdtemp(join(tmpdir(), 'loading-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'events.ndjson')
  const T0 = Date.UTC(2026, 0, 1)
  const event = fc.record({
    id: fc.integer({ min: 0, max: 500 }),
    // Few distinct times: many events share a millisecond, so the message_id decides their order.
    at: fc.integer({ min: 0, max: 20 }).map((n) => T0 + n * 1000 + (n % 3)),
    device: fc.option(fc.constantFrom('d1', 'd2', 'dé'), { nil: undefined }),
    space: fc.constantFrom('s1', 's2'),
    code: fc.constantFrom('A', 'B"quoted', 'C\\back'),
    category: fc.constantFrom('alert' as const, 'notification' as const),
    // How the line is written: the wire form, or one of the forms only the thorough reader takes.
    form: fc.constantFrom('wire', 'wire', 'spaced', 'reordered', 'offset', 'lower-t', 'escaped', 'crlf', 'repeated')
  })
  await fc.assert(fc.asyncProperty(fc.uniqueArray(event, { selector: (e) => e.id, maxLength: 60 }), fc.boolean(), async (events, inOrder) => {
    const stored = events.map((e) => {
      const message: Record<string, string> = { message_id: `m${e.id}`, message_code: e.code, message_category: e.category, date_time: new Date(e.at).toISOString() }
      if (e.device !== undefined) message.device_id = e.device
      message.space_id = e.space
      return { message: message as never, epochMs: e.at, form: e.form }
    })
    const lineOf = (message: never, form: string): string[] => {
      const wire = encodeMessage(message)
      const m = message as Record<string, string>
      switch (form) {
        case 'spaced': return [JSON.stringify(m, null, 1).replace(/\n/g, '')]
        case 'reordered': return [JSON.stringify({ space_id: m.space_id, ...m })]
        case 'offset': return [wire.replace(/"date_time":"([^"]+)Z"/, (_, time: string) => `"date_time":"${time}+00:00"`)]
        case 'lower-t': return [wire.replace(/(\d)T(\d)/, '$1t$2')]
        case 'escaped': return [wire.replace('"message_id":"m', '"message_id":"\\u006d')]
        case 'crlf': return [wire + '\r']
        // The same event twice: kept once.
        case 'repeated': return [wire, '', wire]
        default: return [wire]
      }
    }
    // In answer order (as the provider writes files) or in reverse.
    const { compareMessageIds } = await import('../src/store/event-order.js')
    if (inOrder) {
      stored.sort((a, b) => a.epochMs - b.epochMs || compareMessageIds((a.message as { message_id: string }).message_id, (b.message as { message_id: string }).message_id))
    }
    const lines = stored.flatMap(({ message, form }) => lineOf(message, form))
    await writeFile(file, (inOrder ? lines : lines.reverse()).join('\n') + '\n')
    const loaded = await loadMemoryEventStore(file)
    const expected = new MemoryEventStore(stored.map(({ message, epochMs }) => ({ message, epochMs })))
    const query = { startMs: T0 - 1000, endMs: T0 + 100_000, entities: undefined }
    const bytesOf = async (store: InstanceType<typeof MemoryEventStore>) => {
      const parts: string[] = []
      for await (const batch of store.queryEvents(query)) {
        batch.messages.forEach((message, i) => {
          const { bytes, offsets, positions } = batch.encoded!
          parts.push(bytes.toString('utf8', offsets[positions[i]!]!, offsets[positions[i]! + 1]!))
          t.equal(parts.at(-1), encodeMessage(message), 'each event\'s bytes are its wire JSON')
        })
      }
      return parts
    }
    t.equal(loaded.size, stored.length)
    t.same(await bytesOf(loaded), await bytesOf(expected))
    // The message_id index came from the load itself when the file was in order: every ID is found.
    let found = 0
    for await (const batch of loaded.queryEvents({ ...query, messageIds: new Set(stored.map(({ message }) => (message as { message_id: string }).message_id)) })) found += batch.messages.length
    t.equal(found, stored.length)
  }), { numRuns: 60 })
})

t.test('a message_id used again for another event stops the load, naming both lines, whatever their form', async (t) => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const dir = await mkdtemp(join(tmpdir(), 'loading-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'events.ndjson')
  const wire = '{"message_id":"m1","message_code":"A","message_category":"alert","date_time":"2026-01-01T00:00:00.000Z","space_id":"s1"}'
  await writeFile(file, [wire, '', wire.replace('"A"', '"B"').replace('{', '{ ')].join('\n'))
  await t.rejects(loadMemoryEventStore(file), { message: /line 3.*message_id "m1" was already used by line 1 for a different event/ })
  await writeFile(file, [wire, '{"message_id":"m2","message_code":"A","message_code":"B","message_category":"alert","date_time":"2026-01-01T00:00:00.000Z","space_id":"s1"}'].join('\n'))
  await t.rejects(loadMemoryEventStore(file), { message: /line 2.*"message_code" is given twice/ })
})

t.test('a line in wire form is kept as its bytes: its message is made when first read, and is what the line says', async (t) => {
  const { scanWireLine, scanWireParts } = await import('../src/data/wire-line.js')
  const { encodeMessage } = await import('../src/store/message-json.js')
  const { SegmentBuilder } = await import('../src/store/memory/segment-builder.js')
  const lines = [
    '{"message_id":"m1","message_code":"A","message_category":"alert","date_time":"2026-01-01T00:00:00.000Z","device_id":"d1","space_id":"s1"}',
    '{"message_id":"m3","message_code":"B","message_category":"notification","date_time":"2026-01-01T00:00:01.000Z","space_id":"s2"}',
    // The same millisecond as the next: the message_id decides, read from the bytes.
    '{"message_id":"m2","message_code":"A","message_category":"alert","date_time":"2026-01-01T00:00:01.000Z","device_id":"d2","space_id":"s1"}'
  ]
  const builder = new SegmentBuilder(1024)
  lines.forEach((line, i) => {
    const bytes = Buffer.from(line)
    t.equal(builder.addWire(bytes, 0, bytes.length, scanWireParts(bytes, 0, bytes.length)!, i + 1), undefined)
  })
  // The same event again is kept once; another event under a used ID names the first line.
  const again = Buffer.from(lines[0]!)
  t.equal(builder.addWire(again, 0, again.length, scanWireParts(again, 0, again.length)!, 4), undefined)
  const other = Buffer.from(lines[0]!.replace('"A"', '"C"'))
  t.equal(builder.addWire(other, 0, other.length, scanWireParts(other, 0, other.length)!, 5), 'message_id "m1" was already used by line 1 for a different event')
  const segment = builder.build()
  t.equal(segment.size, 3)
  t.equal(segment.messagesMade, 0, 'no message made by the load')
  t.same(Array.from(segment.entities(), ({ device_id: device, space_id: space }) => [device, space]), [['d1', 's1'], ['d2', 's1'], [undefined, 's2']], 'entities in answer order, from the numbers')
  t.equal(segment.messagesMade, 0, 'nor by reading the entities')
  t.equal(segment.messageWithId('m9'), undefined)
  t.equal(segment.messagesMade, 0, 'nor by looking up an ID that is not there')
  const expected = [lines[0]!, lines[2]!, lines[1]!].map((line) => scanWireLine(Buffer.from(line), 0, line.length)!.message)
  t.same(segment.messageWithId('m2'), expected[1])
  t.equal(segment.messagesMade, 1, 'a lookup that finds an event makes its message')
  const answered = [...segment.batches({ startMs: 0, endMs: Date.UTC(2027, 0, 1), entities: undefined, category: 'alert' })].flatMap((batch) => batch.messages)
  t.same(answered, [expected[0], expected[1]], 'a filter reads the messages it needs')
  t.equal(segment.messagesMade, 2, 'only the events it answers are made (the notification is told from its bytes), once')
  t.equal(segment.messageAt(1), segment.messageAt(1), 'made once, then kept')
  t.same(answered.map((message) => encodeMessage(message)), [lines[0], lines[2]], 'each made message encodes to its line')
})

t.test('a last line cut short (an append a crash interrupted, never acknowledged) is not loaded, and is cut off the file before the next append', async (t) => {
  const { appendFile, mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const dir = await mkdtemp(join(tmpdir(), 'loading-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'events.ndjson')
  const line = (id: string, ms: number) => `{"message_id":"${id}","message_code":"A","message_category":"alert","date_time":"${new Date(Date.UTC(2026, 0, 1) + ms).toISOString()}","space_id":"s1"}`
  const whole = `${line('m1', 0)}\n${line('m2', 1000)}\n`
  const torn = line('m3', 2000).slice(0, 60)
  await writeFile(file, whole + torn)
  const store = await loadMemoryEventStore(file)
  t.equal(store.size, 2, 'the whole lines are loaded')
  t.same(store.tornTail, { line: 3, offset: Buffer.byteLength(whole), bytes: torn.length }, 'the cut line is named')
  const m4 = line('m4', 3000)
  const written = await store.writeEvents([{ event: { epochMs: Date.UTC(2026, 0, 1) + 3000, message: JSON.parse(m4) }, line: 1, json: { bytes: Buffer.from(m4), start: 0, end: Buffer.byteLength(m4) } }])
  t.equal(written.written, 1)
  await store.close()
  t.equal(await readFile(file, 'utf8'), `${whole}${m4}\n`, 'the cut line is gone, the new event after the whole ones')
  t.equal((await loadMemoryEventStore(file)).size, 3, 'and the file loads whole')

  // The file changed after the load (another process appended after the cut line): nothing is cut.
  await writeFile(file, whole + torn)
  const later = await loadMemoryEventStore(file)
  await appendFile(file, '\n')
  await later.writeEvents([{ event: { epochMs: Date.UTC(2026, 0, 1) + 3000, message: JSON.parse(m4) }, line: 1, json: { bytes: Buffer.from(m4), start: 0, end: Buffer.byteLength(m4) } }])
  await later.close()
  t.equal(await readFile(file, 'utf8'), `${whole}${torn}\n${m4}\n`, 'what others wrote is never cut')

  // A last line that is whole JSON but not a valid event is no cut append: it stops the load;
  // so does one with a typo before its end (a hand edit, not the beginning of a line).
  await writeFile(file, whole + line('m5', 4000).replace('"A"', '1'))
  await t.rejects(loadMemoryEventStore(file), { message: /line 3/ })
  await writeFile(file, whole + line('m6', 5000).replace('"A"', 'A'))
  await t.rejects(loadMemoryEventStore(file), { message: /line 3/ })
})

t.test('the provider starts on a file whose last line was cut short, and says so in its log', async (t) => {
  const { Writable } = await import('node:stream')
  const { readFile, writeFile } = await import('node:fs/promises')
  const file = join(t.testdir(), 'events.ndjson')
  const fixture = await readFile(join(fixturesDir, 'events.ndjson'), 'utf8')
  await writeFile(file, fixture.endsWith('\n') ? fixture + '{"message_id":"cut-' : fixture + '\n{"message_id":"cut-')
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { eventsFile: file }, { logger: { level: 'info', stream } })
  t.match(lines.join(''), /"line":22,.*"msg":"the events file ends with a line cut short/)
  const answer = await app.inject({ url: '/health/ready' })
  t.equal(answer.statusCode, 200, 'and serves')
})

t.test('a worker takes the events other processes appended to the file after its load, once each, whole lines only', async (t) => {
  const { appendFile, mkdtemp, rm, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const dir = await mkdtemp(join(tmpdir(), 'loading-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'events.ndjson')
  const line = (id: string, ms: number) => `{"message_id":"${id}","message_code":"A","message_category":"alert","date_time":"${new Date(Date.UTC(2026, 0, 1) + ms).toISOString()}","space_id":"s1"}`
  await writeFile(file, `${line('m1', 0)}\n${line('m2', 1000)}`)
  const store = await loadMemoryEventStore(file)
  t.equal(store.size, 2)
  // Another worker appends (its line break first: the file ended without one), and one of its
  // events also reaches this one over the bus before the catch-up reads it.
  await appendFile(file, `\n${line('m3', 2000)}\n${line('m4', 3000)}\n${line('m5', 4000).slice(0, 30)}`)
  store.takeWrittenElsewhere([{ epochMs: Date.UTC(2026, 0, 1) + 3000, message: JSON.parse(line('m4', 3000)) }])
  t.equal(await store.takeAppendedSinceLoad(), 1, 'the one event it did not have yet (a half line is not an event yet)')
  t.equal(store.size, 4)
  t.equal(await store.takeAppendedSinceLoad(), 0, 'nothing twice')
})
