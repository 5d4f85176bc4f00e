import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { OptionError, parseGenerateOptions } from '../src/cli/generate-options.js'
import { BASE_CODE_COUNT, buildCatalog } from '../src/demo/catalog.js'
import { DATASET_FILES, generateDataset, type DatasetOptions } from '../src/demo/generate-dataset.js'
import { emittableCodes } from '../src/demo/incidents.js'
import { projectRoot } from '../src/project-root.js'
import { loadEntityRegistry } from '../src/registry/load-entities.js'
import { loadSpecificationCatalog } from '../src/specifications/load-specifications.js'
import { compareEvents } from '../src/store/event-order.js'
import { loadMemoryEventStore } from '../src/store/memory/load-memory-store.js'
import type { EntitiesFile } from '../schemas/entities.js'
import type { MessageRecord } from '../schemas/message.js'
import type { EventSpecification } from '../schemas/specifications.js'

const DAY_MS = 86_400_000
const END = '2026-11-01T00:00:00Z'
const END_MS = Date.parse(END)

function smallOptions (outDir: string, overrides: Partial<DatasetOptions> = {}): DatasetOptions {
  return { devices: 30, spaces: 9, days: 14, codes: 40, seed: 7, endMs: END_MS, rate: 0.5, outDir, ...overrides }
}

async function readDataset (dir: string) {
  const text = (name: string) => readFile(join(dir, name), 'utf8')
  return {
    eventsText: await text(DATASET_FILES.events),
    events: (await text(DATASET_FILES.events)).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as MessageRecord),
    entities: JSON.parse(await text(DATASET_FILES.entities)) as EntitiesFile,
    specifications: JSON.parse(await text(DATASET_FILES.specifications)) as EventSpecification[]
  }
}

async function readBytes (dir: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {}
  for (const name of Object.values(DATASET_FILES)) files[name] = await readFile(join(dir, name))
  return files
}

t.test('the same options and seed give the same bytes; another seed other data', async (t) => {
  const dir = t.testdir()
  await generateDataset(smallOptions(join(dir, 'a')))
  await generateDataset(smallOptions(join(dir, 'b')))
  await generateDataset(smallOptions(join(dir, 'c'), { seed: 8 }))
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => readBytes(join(dir, name))))
  for (const name of Object.values(DATASET_FILES)) t.ok(a![name]!.equals(b![name]!), `${name} is identical`)
  t.notOk(a![DATASET_FILES.events]!.equals(c![DATASET_FILES.events]!), 'other events with another seed')
  t.notOk(a![DATASET_FILES.entities]!.equals(c![DATASET_FILES.entities]!), 'devices placed otherwise with another seed')
  t.ok(a![DATASET_FILES.specifications]!.equals(c![DATASET_FILES.specifications]!), 'the catalog does not depend on the seed')
})

t.test('the files load through the provider loaders, and no event is left out', async (t) => {
  const dir = t.testdir()
  const summary = await generateDataset(smallOptions(dir, { codes: 60 }))
  const registry = await loadEntityRegistry(join(dir, DATASET_FILES.entities))
  const catalog = await loadSpecificationCatalog(join(dir, DATASET_FILES.specifications))
  const store = await loadMemoryEventStore(join(dir, DATASET_FILES.events))
  const { events } = await readDataset(dir)
  t.equal(registry.deviceCount, 30)
  t.equal(registry.spaceCount, 9)
  t.equal([...catalog.codes].length, 60)
  t.ok(summary.events > 0)
  t.equal(store.size, summary.events, 'every event has its own message_id')
  t.ok(events.every((event) => registry.knowsEntityOf(event)), 'every event belongs to a known entity')
})

t.test('counts are as asked and events use only catalog codes, with their categories', async (t) => {
  const dir = t.testdir()
  const summary = await generateDataset(smallOptions(dir, { devices: 45, spaces: 12, codes: 50 }))
  const { events, entities, specifications } = await readDataset(dir)
  t.equal(entities.devices.length, 45)
  t.equal(entities.spaces.length, 12)
  t.equal(specifications.length, 50)
  t.match(summary, { events: events.length, devices: 45, spaces: 12, codes: 50, tags: entities.tags.length })
  const categoryOf = new Map(specifications.map((specification) => [specification.message_code, specification.message_category]))
  const strays = events.filter((event) => categoryOf.get(event.message_code) !== event.message_category)
  t.same(strays, [], 'every event code is in the catalog with the same category')

  const tagIds = entities.tags.map((tag) => tag.id)
  t.ok(tagIds.includes('site-ams-hq') && tagIds.includes('soap-dispensers') && tagIds.includes('vip-floors'), 'building, type and mixed tags')
  const soap = entities.tags.find((tag) => tag.id === 'soap-dispensers')!
  t.same(soap.device_ids, entities.devices.filter((device) => device.id.startsWith('soap-')).map((device) => device.id))
  const sites = entities.tags.filter((tag) => tag.id.startsWith('site-'))
  t.equal(sites.reduce((sum, tag) => sum + tag.space_ids.length, 0), 12, 'every space is in exactly one building tag')
})

t.test('events are sorted, unique, inside [end - days, end), and shaped as the file format says', async (t) => {
  const dir = t.testdir()
  await generateDataset(smallOptions(dir))
  const { events, eventsText, entities } = await readDataset(dir)
  const startMs = END_MS - 14 * DAY_MS
  const times = events.map((event) => Date.parse(event.date_time))
  t.ok(times.every((time) => time >= startMs && time < END_MS), 'inside the period')
  t.ok(events.every((event, i) => i === 0 || compareEvents(events[i - 1]!.date_time, events[i - 1]!.message_id, event.date_time, event.message_id) < 0),
    'strictly increasing in (date_time, message_id)')
  t.equal(new Set(events.map((event) => event.message_id)).size, events.length, 'message_ids are unique')
  t.ok(events.every((event) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(event.message_id)), 'UUID v7 shaped')
  t.ok(events.every((event) => parseInt(event.message_id.slice(0, 8) + event.message_id.slice(9, 13), 16) === Date.parse(event.date_time)),
    'each UUID v7 carries its own date_time')
  t.ok(events.every((event) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(event.date_time)), 'UTC with milliseconds')

  const firstLine = eventsText.slice(0, eventsText.indexOf('\n'))
  const fieldOrder = ['message_id', 'message_code', 'message_category', 'date_time', 'device_id', 'space_id']
  const keys = Object.keys(JSON.parse(firstLine))
  t.same(keys, fieldOrder.filter((field) => keys.includes(field)), 'fields in the documented order')

  const deviceIds = new Set(entities.devices.map((device) => device.id))
  const spaceIds = new Set(entities.spaces.map((space) => space.id))
  const deviceEvents = events.filter((event) => event.device_id !== undefined)
  const spaceEvents = events.filter((event) => event.device_id === undefined)
  t.ok(deviceEvents.length > 0 && spaceEvents.length > 0, 'both device and space events')
  t.ok(deviceEvents.every((event) => deviceIds.has(event.device_id!) && spaceIds.has(event.space_id)), 'device events name a known device and space')
  t.ok(spaceEvents.every((event) => spaceIds.has(event.space_id)), 'space events name a known space')
})

t.test('message IDs depend on every option: different data sets share none, the same options give the same IDs', async (t) => {
  const dir = t.testdir()
  const idsOf = async (name: string, overrides: Partial<DatasetOptions>) => {
    await generateDataset(smallOptions(join(dir, name), { seed: 1, ...overrides }))
    return (await readDataset(join(dir, name))).events.map((event) => event.message_id)
  }
  const base = await idsOf('base', {})
  t.same(await idsOf('again', {}), base, 'the same options: the same IDs')
  const variants: Array<[string, Partial<DatasetOptions>]> = [
    ['devices', { devices: 31 }], ['spaces', { spaces: 10 }], ['days', { days: 15 }], ['codes', { codes: 41 }],
    ['end', { endMs: END_MS + DAY_MS }], ['rate', { rate: 0.6 }], ['seed', { seed: 2 }], ['moves', { moveChancePerDay: 0.01 }]
  ]
  const seen = new Set(base)
  for (const [option, overrides] of variants) {
    const ids = await idsOf(option, overrides)
    t.equal(ids.filter((id) => seen.has(id)).length, 0, `another --${option}: no message_id of another set`)
    for (const id of ids) seen.add(id)
  }

  // The bundled demo's options keep its IDs (the test above); its seed with the default rate
  // and end (what `npm run generate` with the default seed makes) shares none of them.
  const bundled = new Set((await readDataset(join(projectRoot, 'data'))).events.map((event) => event.message_id))
  const sameSeed = await idsOf('demo-seed', { devices: 120, spaces: 24, days: 90, codes: BASE_CODE_COUNT, rate: 0.5, endMs: Date.parse('2026-11-23T00:00:00Z') })
  t.equal(sameSeed.filter((id) => bundled.has(id)).length, 0, 'no message_id of data/events.ndjson')
})

t.test('a moved device reports from its new space, and the entities file has where it ends up', async (t) => {
  const dir = t.testdir()
  const summary = await generateDataset(smallOptions(dir, { days: 60, moveChancePerDay: 0.05 }))
  const { events, entities } = await readDataset(dir)
  t.ok(summary.moves > 0, 'some devices moved')
  const spacesOf = new Map<string, string[]>()
  for (const event of events) {
    if (event.device_id === undefined) continue
    const spaces = spacesOf.get(event.device_id) ?? []
    if (spaces.at(-1) !== event.space_id) spaces.push(event.space_id)
    spacesOf.set(event.device_id, spaces)
  }
  const moved = [...spacesOf].filter(([, spaces]) => spaces.length > 1)
  t.ok(moved.length > 0, 'some device has events in more than one space')

  const quiet = await generateDataset(smallOptions(join(dir, 'still'), { days: 60, moveChancePerDay: 0 }))
  const still = await readDataset(join(dir, 'still'))
  const home = new Map(still.entities.devices.map((device) => [device.id, device.space_id]))
  t.equal(quiet.moves, 0)
  t.ok(still.events.every((event) => event.device_id === undefined || home.get(event.device_id) === event.space_id),
    'without moves every device event happens in the device\'s space')
  t.not(JSON.stringify(entities.devices), JSON.stringify(still.entities.devices), 'moves change where devices end up')
})

t.test('--rate sets the number of events per entity and day', async (t) => {
  const dir = t.testdir()
  const busy = await generateDataset(smallOptions(join(dir, 'busy'), { devices: 40, spaces: 10, days: 30, rate: 2 }))
  const expected = 50 * 30 * 2
  t.ok(Math.abs(busy.events - expected) < expected * 0.1, `about ${expected} events, got ${busy.events}`)
  const none = await generateDataset(smallOptions(join(dir, 'none'), { rate: 0 }))
  t.equal(none.events, 0)
})

t.test('catalogs: the first N codes, every code described and used by some entity type', async (t) => {
  for (let size = 1; size <= BASE_CODE_COUNT + 7; size++) {
    const catalog = buildCatalog(size)
    const codes = catalog.specifications.map((specification) => specification.message_code)
    t.equal(codes.length, size)
    t.equal(new Set(codes).size, size, `${size}: unique codes`)
    const emittable = emittableCodes(catalog)
    const unused = codes.filter((code) => !emittable.has(code))
    t.same(unused, [], `${size}: every code can be emitted`)
    t.ok([...emittable].every((code) => catalog.categoryOf.has(code)), `${size}: nothing outside the catalog is emitted`)
  }
  const big = buildCatalog(200).specifications
  t.same(big.slice(0, BASE_CODE_COUNT), buildCatalog(BASE_CODE_COUNT).specifications, 'a bigger catalog starts with the base codes')
  t.ok(big.slice(0, BASE_CODE_COUNT).every((specification) =>
    specification.details.map((detail) => detail.language).join() === 'eng,fra,deu,nld,spa'), 'base codes in five languages')
  const variants = big.slice(BASE_CODE_COUNT)
  t.ok(variants.every((specification) => specification.message_category === 'alert' &&
    specification.details.map((detail) => detail.language).join() === 'eng,fra,deu'), 'numbered codes in three languages')
  t.same(variants.slice(0, 4).map((specification) => specification.message_code), ['CM_FAULT_101', 'DISP_FAULT_101', 'PC_FAULT_101', 'CM_FAULT_102'])
  const texts = big.flatMap((specification) => specification.details.flatMap((detail) => [detail.description, detail.root_cause, detail.solution]))
  t.ok(texts.every((text) => text.trim() === text && text.length > 0), 'no empty or padded texts')
})

t.test('the option parser', async (t) => {
  const now = Date.parse('2026-11-20T22:35:00.123Z')
  const required = ['--devices', '10', '--spaces', '3', '--days', '7', '--out', 'some/dir']

  t.test('reads every option', async (t) => {
    const command = parseGenerateOptions([...required, '--codes', '200', '--seed', '42', '--end', '2026-06-01T12:00:00+02:00', '--rate=1.5'], now)
    t.same(command, {
      help: false,
      options: { devices: 10, spaces: 3, days: 7, outDir: 'some/dir', codes: 200, seed: 42, endMs: Date.parse('2026-06-01T10:00:00Z'), rate: 1.5 }
    })
  })

  t.test('defaults: the base catalog, seed 1, rate 0.5, the period ending today at midnight UTC', async (t) => {
    const command = parseGenerateOptions(required, now)
    t.same(command, {
      help: false,
      options: { devices: 10, spaces: 3, days: 7, outDir: 'some/dir', codes: BASE_CODE_COUNT, seed: 1, endMs: Date.parse('2026-11-20T00:00:00Z'), rate: 0.5 }
    })
  })

  t.test('--help', async (t) => {
    t.same(parseGenerateOptions(['--help'], now), { help: true })
  })

  const refused: Array<[what: string, args: string[], option: string, message: RegExp]> = [
    ['a missing --devices', required.slice(2), '--devices', /--devices is required/],
    ['a missing --out', required.slice(0, 6), '--out', /--out is required/],
    ['a non-integer --devices', ['--devices', '1.5', ...required.slice(2)], '--devices', /--devices must be an integer/],
    ['a word for --days', [...required.slice(0, 5), 'week', ...required.slice(6)], '--days', /--days must be an integer/],
    ['zero --days', [...required.slice(0, 5), '0', ...required.slice(6)], '--days', /--days must be an integer from 1/],
    ['zero --spaces', [...required.slice(0, 3), '0', ...required.slice(4)], '--spaces', /--spaces must be an integer from 1/],
    ['zero --codes', [...required, '--codes', '0'], '--codes', /--codes must be an integer from 1/],
    ['a negative --rate', [...required, '--rate=-1'], '--rate', /--rate must be a number/],
    ['a word for --rate', [...required, '--rate', 'high'], '--rate', /--rate must be a number/],
    ['a date without a time for --end', [...required, '--end', '2026-11-01'], '--end', /--end must be an RFC 3339 date-time/],
    ['a period before 1678', [...required, '--end', '1678-01-03T00:00:00Z'], '--end', /--end and --days/],
    ['an empty --out', [...required.slice(0, 7), ' '], '--out', /--out must name a folder/],
    ['an unknown option', [...required, '--colour', 'red'], '--colour', /--colour/],
    ['a repeated option', [...required, '--seed', '1', '--seed', '2'], '--seed', /--seed is given more than once/],
    ['an option without its value', [...required, '--seed'], '--seed', /--seed/],
    ['a stray argument', [...required, 'extra'], 'extra', /extra/]
  ]
  for (const [what, args, option, message] of refused) {
    t.test(`refuses ${what}`, async (t) => {
      let refusal: unknown
      try {
        parseGenerateOptions(args, now)
      } catch (error) {
        refusal = error
      }
      t.ok(refusal instanceof OptionError, 'an OptionError')
      t.match(refusal, { option, message })
    })
  }
})

t.test('the bundled demo data is what the command in data/README.md writes', async (t) => {
  const dataDir = join(projectRoot, 'data')
  const readme = await readFile(join(dataDir, 'README.md'), 'utf8')
  const command = /^npm run generate -- (.+ --out data)$/m.exec(readme)
  t.ok(command, 'the README shows the command')
  const parsed = parseGenerateOptions(command![1]!.split(' '), Date.now())
  if (parsed.help) throw new Error('unexpected --help')
  const dir = t.testdir()
  await generateDataset({ ...parsed.options, outDir: dir })
  const [fresh, bundled] = await Promise.all([readBytes(dir), readBytes(dataDir)])
  for (const name of Object.values(DATASET_FILES)) t.ok(fresh[name]!.equals(bundled[name]!), `data/${name} is up to date`)
})
