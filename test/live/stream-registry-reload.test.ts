import t from 'tap'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { EntityRegistry } from '../../src/registry/entity-registry.js'
import { askedEntities, askedOtherwise } from '../../src/live/asked-entities.js'
import { tokenDigest } from '../../src/http/bearer-token.js'
import { AUTH, build, fixturesDir, INGEST_AUTH } from '../helper.js'
import { SseClient } from './sse-client.js'

const entitiesOf = () => JSON.parse(readFileSync(join(fixturesDir, 'entities.json'), 'utf8'))

/** The fixtures' events and entities files, copied into `dir` (a test edits and appends to them). */
function copiesOfFixtures (dir: string) {
  const eventsFile = join(dir, 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  const entitiesFile = join(dir, 'entities.json')
  copyFileSync(join(fixturesDir, 'entities.json'), entitiesFile)
  return { dir, eventsFile, entitiesFile }
}

t.test('what a reload changes that a stream\'s filter depends on: tags with other members, devices and spaces it adds', async (t) => {
  const before = new EntityRegistry(entitiesOf())
  t.same(new EntityRegistry(entitiesOf()).changesSince(before), { tagIds: new Set(), addedDeviceIds: new Set(), addedSpaceIds: new Set() }, 'the same file: nothing')

  const reordered = entitiesOf()
  reordered.tags.find((tag: { id: string }) => tag.id === 'mixed/tag (1)').device_ids.reverse()
  t.equal(new EntityRegistry(reordered).changesSince(before).tagIds.size, 0, 'a tag\'s members in another order are the same members')

  const changed = entitiesOf()
  changed.devices.push({ id: 'new-dev', space_id: 'bldg-a/floor-2' })
  changed.spaces.push({ id: 'new-space' })
  changed.tags.find((tag: { id: string }) => tag.id === 'soap dispensers').device_ids.push('new-dev')
  changed.tags = changed.tags.filter((tag: { id: string }) => tag.id !== 'empty')
  changed.tags.push({ id: 'new-tag', device_ids: [], space_ids: ['new-space'] })
  const changes = new EntityRegistry(changed).changesSince(before)
  t.same(changes, { tagIds: new Set(['soap dispensers', 'new-tag', 'empty']), addedDeviceIds: new Set(['new-dev']), addedSpaceIds: new Set(['new-space']) })
  // And the other way: what a reload removes is a change of its tags, not an addition.
  t.same(before.changesSince(new EntityRegistry(changed)), { tagIds: new Set(['soap dispensers', 'new-tag', 'empty']), addedDeviceIds: new Set(), addedSpaceIds: new Set() })

  const asked = (tags: string[] | undefined, unknown: Array<['device' | 'space' | 'tag', string]> = []) =>
    askedEntities(tags, unknown.map(([type, id]) => ({ id, item_type: type, message: `invalid_${type}` as const })))
  const one = asked(['soap dispensers'], [['device', 'x']])
  t.equal(asked(['soap dispensers'], [['device', 'x']]), one, 'streams that ask the same share one object')
  t.not(asked(['soap dispensers'], [['space', 'x']]), one)
  t.equal(asked(undefined), undefined, 'no tag and no unknown ID: nothing a reload changes')
  t.equal(asked([]), undefined)
  t.equal(askedOtherwise(asked(['soap dispensers'])!, changes), true, 'a tag with other members')
  t.equal(askedOtherwise(asked(['floor-1'])!, changes), false, 'a tag the reload left alone')
  t.equal(askedOtherwise(asked(['new-tag'])!, changes), true, 'a tag it adds (unknown when the stream opened)')
  t.equal(askedOtherwise(asked(undefined, [['device', 'new-dev']])!, changes), true, 'a device it adds')
  t.equal(askedOtherwise(asked(undefined, [['space', 'new-space']])!, changes), true, 'a space it adds')
  t.equal(askedOtherwise(asked(undefined, [['device', 'still-unknown'], ['tag', 'no-tag']])!, changes), false, 'unknown IDs it does not add')
})

t.test('a stream whose tags have other members in a reloaded registry, or that named a device the reload adds, ends; its client resumes with the new events; other streams go on', async (t) => {
  const { eventsFile, entitiesFile } = copiesOfFixtures(t.testdir())
  const lines: string[] = []
  const logs = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { eventsFile, entitiesFile }, { logger: { level: 'info', stream: logs } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/svc/v2/events/stream`
  const open = async (query: string, headers: Record<string, string> = {}) => {
    const client = new SseClient(`${base}${query}`, { ...AUTH, ...headers })
    t.teardown(() => client.close())
    await client.until((c) => c.status === 200)
    return client
  }
  const post = async (line: object) => {
    const answer = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: JSON.stringify(line) + '\n' })
    return answer.json()
  }
  const event = (id: string, deviceId: string, spaceId: string, second: number) =>
    ({ message_id: id, message_code: 'EMPTY', message_category: 'alert', date_time: `2025-06-01T00:00:0${second}.000Z`, device_id: deviceId, space_id: spaceId })

  const soapTag = await open('?tag_ids=soap%20dispensers')
  const newDevice = await open('?device_ids=new-dev')
  await newDevice.until((c) => c.frames.some((frame) => frame.event === 'item_errors'))
  const floorTag = await open('?tag_ids=floor-1')
  const everything = await open('')
  // A cursor to resume from: the tag's stream gets one event before the reload.
  t.same(await post(event('before-reload', 'soap-001', 'bldg-a/floor-1', 1)), { written: 1, unchanged: 0, refused: [] })
  await soapTag.until((c) => c.messages.length === 1)

  // A new device, in the soap dispensers' tag.
  const entities = entitiesOf()
  entities.devices.push({ id: 'new-dev', space_id: 'bldg-a/floor-2' })
  entities.tags.find((tag: { id: string }) => tag.id === 'soap dispensers').device_ids.push('new-dev')
  writeFileSync(entitiesFile, JSON.stringify(entities))
  await soapTag.until((c) => c.ended, 5000, 'the tag\'s stream to end')
  await newDevice.until((c) => c.ended, 5000, 'the stream that named the new device to end')
  t.match(lines.join(''), /"reason":"the entities it asked for are others in the reloaded registry"[^\n]*"msg":"stream ended"/, 'logged')

  // Accepted after they ended, before their clients come back.
  t.same(await post(event('after-reload', 'new-dev', 'bldg-a/floor-2', 2)), { written: 1, unchanged: 0, refused: [] })
  await everything.until((c) => c.messages.some((frame) => frame.data?.includes('after-reload')), 5000, 'the new device\'s event on the stream of everything')
  t.notOk(floorTag.ended, 'a stream whose tag the reload left alone goes on')
  t.notOk(everything.ended, 'and a stream of everything')
  t.notOk(floorTag.messages.some((frame) => frame.data?.includes('after-reload')), 'without the new device\'s event, which is not its tag\'s')

  // The tag's client reconnects as EventSource does: the new member's event, which the stream
  // resolved when it opened would never have had.
  const resumed = await open('?tag_ids=soap%20dispensers', { 'last-event-id': soapTag.messages[0]!.id! })
  await resumed.until((c) => c.messages.length === 1, 5000, 'the resumed event')
  t.match(resumed.messages[0]!.data, '"message_id":"after-reload"')
  t.same(resumed.frames.filter((frame) => frame.event === 'item_errors'), [], 'and no item error now')
  // And live from there.
  t.same(await post(event('later', 'new-dev', 'bldg-a/floor-2', 3)), { written: 1, unchanged: 0, refused: [] })
  await resumed.until((c) => c.messages.length === 2, 5000, 'the live event')
  t.match(resumed.messages[1]!.data, '"message_id":"later"')

  // The stream that named the new device had had no event: its last frame is its cursor alone
  // (EventSource keeps it, and dispatches nothing), so its client resumes with the device's
  // first event, accepted while it was away.
  t.same(newDevice.messages, [])
  const cursor = newDevice.frames.at(-1)
  t.same(Object.keys(cursor ?? {}), ['id'], 'a cursor to resume from')
  const back = await open('?device_ids=new-dev', { 'last-event-id': cursor!.id! })
  await back.until((c) => c.messages.length === 2, 5000, 'the new device\'s events')
  t.same(back.messages.map((frame) => JSON.parse(frame.data!).message_id), ['after-reload', 'later'])
})

t.test('a scoped token\'s stream ends on a reload only for what its token sees: an entity outside its scope, added or changed, tells it nothing', async (t) => {
  const { dir, eventsFile, entitiesFile } = copiesOfFixtures(t.testdir())
  const tokensFile = join(dir, 'tokens.json')
  writeFileSync(tokensFile, JSON.stringify({ tokens: [{ name: 'floor-1-only', sha256: tokenDigest('floor-1-token'), scope: { space_ids: ['bldg-a/floor-1'] } }] }))
  const app = await build(t, { eventsFile, entitiesFile, tokensFile })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/svc/v2/events/stream`
  const open = async (query: string, token = 'floor-1-token') => {
    const client = new SseClient(`${base}${query}`, { authorization: `Bearer ${token}` })
    t.teardown(() => client.close())
    await client.until((c) => c.frames.some((frame) => frame.event === 'item_errors'))
    return client
  }
  const otherTenantsDevice = await open('?device_ids=other-dev')
  const otherTenantsTag = await open('?tag_ids=mixed%2Ftag%20(1)')
  // Unscoped, the same requests: they see the change (and say when the reload is in).
  const unscopedDevice = await open('?device_ids=other-dev', AUTH.authorization.slice('Bearer '.length))
  const unscopedTag = await open('?tag_ids=mixed%2Ftag%20(1),no-such-tag', AUTH.authorization.slice('Bearer '.length))
  const entities = entitiesOf()
  entities.devices.push({ id: 'other-dev', space_id: 'bldg-a/floor-2' })
  entities.tags.find((tag: { id: string }) => tag.id === 'mixed/tag (1)').device_ids.push('spare-7')
  writeFileSync(entitiesFile, JSON.stringify(entities))
  await unscopedDevice.until((c) => c.ended, 5000, 'the unscoped stream that named the added device to end')
  await unscopedTag.until((c) => c.ended, 5000, 'the unscoped stream of the changed tag to end')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.notOk(otherTenantsDevice.ended, 'a device added outside its scope: the scoped stream goes on')
  t.notOk(otherTenantsTag.ended, 'a tag it cannot see, changed: the scoped stream goes on')
})
