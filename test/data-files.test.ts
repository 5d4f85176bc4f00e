import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { DataFileError } from '../src/data/data-file-error.js'
import { fixturesDir, testConfig } from './helper.js'

const goodEntities = {
  devices: [{ id: 'd1', space_id: 's1' }],
  spaces: [{ id: 's1' }],
  tags: [{ id: 't1', device_ids: ['d1'], space_ids: ['s1'] }]
}
const goodEvent = { message_id: 'm1', message_code: 'C', message_category: 'alert', date_time: '2025-01-01T00:00:00Z', device_id: 'd1', space_id: 's1' }
const goodSpecifications = [{ message_code: 'C', message_category: 'alert', details: [{ language: 'eng', description: 'd', root_cause: 'r', solution: 's' }] }]

const ndjson = (...lines: unknown[]) => lines.map((line) => typeof line === 'string' ? line : JSON.stringify(line)).join('\n') + '\n'

interface BadFile {
  name: string
  file: 'events.ndjson' | 'entities.json' | 'specifications.json'
  content: string
  /** What the message must say after the file name. */
  where: string
  reason: RegExp
}

const badFiles: BadFile[] = [
  { name: 'entities: not JSON', file: 'entities.json', content: '{\n  "devices": [,]\n}', where: 'line 2', reason: /invalid JSON/ },
  { name: 'entities: missing tags', file: 'entities.json', content: JSON.stringify({ devices: [], spaces: [] }), where: 'entry tags', reason: /required/ },
  { name: 'entities: extra field', file: 'entities.json', content: JSON.stringify({ ...goodEntities, zones: [] }), where: 'entry zones', reason: /unexpected property/ },
  { name: 'entities: a comma in an ID', file: 'entities.json', content: JSON.stringify({ ...goodEntities, spaces: [{ id: 's1' }, { id: 'a,b' }] }), where: 'entry spaces[1].id', reason: /"a,b" is not an identifier/ },
  { name: 'entities: white space around an ID', file: 'entities.json', content: JSON.stringify({ ...goodEntities, spaces: [{ id: 's1' }, { id: ' s2' }] }), where: 'entry spaces[1].id', reason: /is not an identifier/ },
  { name: 'entities: an empty ID', file: 'entities.json', content: JSON.stringify({ ...goodEntities, devices: [{ id: '', space_id: 's1' }] }), where: 'entry devices[0].id', reason: /is not an identifier/ },
  { name: 'entities: a device ID used twice', file: 'entities.json', content: JSON.stringify({ ...goodEntities, devices: [{ id: 'd1', space_id: 's1' }, { id: 'd1', space_id: 's1' }] }), where: 'entry devices[1].id', reason: /already used by devices\[0\]/ },
  { name: 'entities: a device in an unknown space', file: 'entities.json', content: JSON.stringify({ ...goodEntities, devices: [{ id: 'd1', space_id: 's9' }] }), where: 'entry devices[0].space_id', reason: /unknown space "s9"/ },
  { name: 'entities: a tag of an unknown device', file: 'entities.json', content: JSON.stringify({ ...goodEntities, tags: [{ id: 't', device_ids: ['d1', 'd9'], space_ids: [] }] }), where: 'entry tags[0].device_ids[1]', reason: /unknown device "d9"/ },
  { name: 'entities: a tag of an unknown space', file: 'entities.json', content: JSON.stringify({ ...goodEntities, tags: [{ id: 't', device_ids: [], space_ids: ['s9'] }] }), where: 'entry tags[0].space_ids[0]', reason: /unknown space "s9"/ },
  { name: 'events: not JSON', file: 'events.ndjson', content: ndjson(goodEvent, '{"message_id":'), where: 'line 2', reason: /invalid JSON/ },
  { name: 'events: not an object', file: 'events.ndjson', content: ndjson(goodEvent, '[1]'), where: 'line 2', reason: /expected object/ },
  { name: 'events: a missing field', file: 'events.ndjson', content: ndjson(goodEvent, { ...goodEvent, message_id: 'm2', message_code: undefined }), where: 'line 2', reason: /message_code: expected required property/ },
  { name: 'events: an unknown category', file: 'events.ndjson', content: ndjson({ ...goodEvent, message_category: 'warning' }), where: 'line 1', reason: /message_category/ },
  { name: 'events: an unknown field', file: 'events.ndjson', content: ndjson({ ...goodEvent, severity: 3 }), where: 'line 1', reason: /severity: unexpected property/ },
  { name: 'events: no space_id', file: 'events.ndjson', content: ndjson({ ...goodEvent, space_id: undefined }), where: 'line 1', reason: /space_id: expected required property/ },
  { name: 'events: a date without offset', file: 'events.ndjson', content: ndjson({ ...goodEvent, date_time: '2025-01-01T00:00:00' }), where: 'line 1', reason: /date_time: "2025-01-01T00:00:00" is not an RFC 3339 date-time/ },
  { name: 'events: an impossible date', file: 'events.ndjson', content: ndjson({ ...goodEvent, date_time: '2025-02-30T00:00:00Z' }), where: 'line 1', reason: /date_time/ },
  { name: 'events: a date no store can hold', file: 'events.ndjson', content: ndjson({ ...goodEvent, date_time: '2300-01-01T00:00:00Z' }), where: 'line 1', reason: /between 1678 and 2261/ },
  { name: 'events: a comma in an ID', file: 'events.ndjson', content: ndjson({ ...goodEvent, device_id: 'd,1' }), where: 'line 1', reason: /device_id: "d,1" is not an identifier/ },
  { name: 'events: a control character in an ID', file: 'events.ndjson', content: ndjson({ ...goodEvent, space_id: 's\n1' }), where: 'line 1', reason: /space_id: "s\\n1" is not an identifier/ },
  { name: 'events: a C1 control character in an ID', file: 'events.ndjson', content: ndjson({ ...goodEvent, message_id: 'c1-\u0085x' }), where: 'line 1', reason: /message_id: "c1-\u0085x" is not an identifier/ },
  { name: 'events: blank lines are counted', file: 'events.ndjson', content: ndjson(goodEvent, '', '  ', { ...goodEvent, message_id: 7 }), where: 'line 4', reason: /message_id/ },
  { name: 'events: a key given twice', file: 'events.ndjson', content: ndjson(goodEvent, '{"message_id":"m2","message_code":"C","message_category":"alert","date_time":"2025-01-01T00:00:00Z","space_id":"s9","device_id":"d1","space_id":"s1"}'), where: 'line 2', reason: /"space_id" is given twice/ },
  { name: 'events: a key given twice, spelled with an escape', file: 'events.ndjson', content: ndjson('{"message_id":"m2","message_code":"C","message_category":"alert","date_time":"2025-01-01T00:00:00Z","space_id":"s1","space\\u005fid":"s1"}'), where: 'line 1', reason: /"space_id" is given twice/ },
  { name: 'entities: a key given twice', file: 'entities.json', content: '{\n  "devices": [{ "id": "d1", "space_id": "s1", "id": "d2" }],\n  "spaces": [{ "id": "s1" }],\n  "tags": []\n}', where: 'line 2', reason: /"id" is given twice in one object/ },
  { name: 'events: a message_id reused for another event', file: 'events.ndjson', content: ndjson(goodEvent, { ...goodEvent, message_code: 'D' }), where: 'line 2', reason: /already used by line 1 for a different event/ },
  { name: 'specifications: not an array', file: 'specifications.json', content: '{}', where: 'the top level', reason: /expected array/ },
  { name: 'specifications: no English', file: 'specifications.json', content: JSON.stringify([{ ...goodSpecifications[0], details: [{ language: 'fra', description: 'd', root_cause: 'r', solution: 's' }] }]), where: 'entry [0].details', reason: /no "eng"/ },
  { name: 'specifications: a bad language code', file: 'specifications.json', content: JSON.stringify([{ ...goodSpecifications[0], details: [{ language: 'en', description: 'd', root_cause: 'r', solution: 's' }] }]), where: 'entry [0].details[0].language', reason: /"en" is not an ISO 639-2 code/ },
  { name: 'specifications: a code described twice', file: 'specifications.json', content: JSON.stringify([...goodSpecifications, ...goodSpecifications]), where: 'entry [1].message_code', reason: /already described by entry \[0\]/ },
  { name: 'specifications: a language given twice', file: 'specifications.json', content: JSON.stringify([{ ...goodSpecifications[0], details: [goodSpecifications[0]!.details[0], goodSpecifications[0]!.details[0]] }]), where: 'entry [0].details[1].language', reason: /given twice/ },
  { name: 'specifications: a missing solution', file: 'specifications.json', content: JSON.stringify([{ ...goodSpecifications[0], details: [{ language: 'eng', description: 'd', root_cause: 'r' }] }]), where: 'entry [0].details[0].solution', reason: /required/ }
]

t.test('a bad data file stops start-up with a message naming the file and the line or entry', async (t) => {
  for (const bad of badFiles) {
    await t.test(bad.name, async (t) => {
      const dir = t.testdir({
        'events.ndjson': ndjson(goodEvent),
        'entities.json': JSON.stringify(goodEntities),
        'specifications.json': JSON.stringify(goodSpecifications),
        [bad.file]: bad.content
      })
      const config = testConfig({
        eventsFile: join(dir, 'events.ndjson'),
        entitiesFile: join(dir, 'entities.json'),
        specificationsFile: join(dir, 'specifications.json')
      })
      const error = await buildApp(config).then(() => undefined, (error: unknown) => error)
      t.ok(error instanceof DataFileError, 'a DataFileError')
      const message = (error as Error).message
      t.ok(message.startsWith(`${join(dir, bad.file)}: ${bad.where}: `), `names the file and where: ${message}`)
      t.match(message, bad.reason)
    })
  }
})

t.test('the good versions of those files load', async (t) => {
  const dir = t.testdir({
    'events.ndjson': ndjson(goodEvent, goodEvent, ''),
    'entities.json': JSON.stringify(goodEntities),
    'specifications.json': JSON.stringify(goodSpecifications)
  })
  const app = await buildApp(testConfig({
    eventsFile: join(dir, 'events.ndjson'),
    entitiesFile: join(dir, 'entities.json'),
    specificationsFile: join(dir, 'specifications.json')
  }))
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/svc/v2/events?start_date=2024-01-01T00:00:00Z', headers: { authorization: 'Bearer test-token-1' } })
  t.same(response.json().data.map((message: { message_id: string }) => message.message_id), ['m1'], 'an identical repeat is one event')
})

t.test('a missing file is named', async (t) => {
  const missing = join(fixturesDir, 'no-such-file.json')
  for (const key of ['eventsFile', 'entitiesFile', 'specificationsFile'] as const) {
    const error = await buildApp(testConfig({ [key]: missing })).then(() => undefined, (error: unknown) => error)
    t.ok(error instanceof DataFileError, key)
    t.match((error as Error).message, `${missing}: cannot be read`)
  }
})

t.test('a data file that is not a regular file (a named pipe) is refused at start-up, not waited on', async (t) => {
  const fifo = join(t.testdir(), 'entities.json')
  execFileSync('mkfifo', [fifo])
  for (const key of ['entitiesFile', 'eventsFile'] as const) {
    const error = await buildApp(testConfig({ [key]: fifo })).then(() => undefined, (error: unknown) => error)
    t.ok(error instanceof DataFileError, key)
    t.equal((error as Error).message, `${fifo}: cannot be read: not a regular file (a named pipe)`)
  }
})
