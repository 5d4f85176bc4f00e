import t, { type Test } from 'tap'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { DataFileError } from '../src/data/data-file-error.js'
import { main as tokenCommand, newToken } from '../src/cli/token.js'
import { tokenDigest } from '../src/http/bearer-token.js'
import { AUTH, build, fixturesDir, INGEST_AUTH, INGEST_TOKEN, storeWithHeldHealth, TOKEN } from './helper.js'

const ACME = 'acme-secret-token'
const SOAP = 'soap-only-token'
const FEEDER = 'feeder-token'

function tokensFile (dir: string, tokens: unknown[]): string {
  const file = join(dir, 'tokens.json')
  writeFileSync(file, JSON.stringify({ tokens }))
  return file
}

const standardTokens = [
  { name: 'acme-fm', sha256: tokenDigest(ACME), scope: { tag_ids: ['floor-1'] } },
  { name: 'soap-watch', sha256: tokenDigest(SOAP), scope: { device_ids: ['soap-001'] } },
  { name: 'feeder', sha256: tokenDigest(FEEDER).toUpperCase(), ingest: true }
]

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const START = 'start_date=2024-01-01T00:00:00Z'

t.test('a scoped token sees only the events of its scope; IDs outside it are answered as unknown ones', async (t) => {
  const app = await build(t, { tokensFile: tokensFile(t.testdir(), standardTokens) })
  const events = async (query: string, token: string) => (await app.inject({ url: `/svc/v2/events?${START}${query}`, headers: bearer(token) })).json()
  const unscopedFloor = await app.inject({ url: `/svc/v2/events?${START}&space_ids=bldg-a/floor-1`, headers: AUTH })
  const everything = await events('', ACME)
  t.ok(everything.data.length > 0)
  t.same(everything, unscopedFloor.json(), 'no entity parameter: everything in scope (the tag\'s space)')

  const outside = await events('&device_ids=counter\'003', ACME)
  const missing = await events('&device_ids=no-such-device', ACME)
  t.same(outside.data, [])
  t.same(outside.errors, [{ id: 'counter\'003', item_type: 'device', message: 'invalid_device' }], 'a device outside the scope is answered as unknown')
  t.same(missing.errors, [{ id: 'no-such-device', item_type: 'device', message: 'invalid_device' }])
  t.same((await events('&space_ids=bldg-a/floor-2', ACME)).errors, [{ id: 'bldg-a/floor-2', item_type: 'space', message: 'invalid_space' }])
  t.same((await events('&tag_ids=mixed/tag (1)', ACME)).errors, [{ id: 'mixed/tag (1)', item_type: 'tag', message: 'invalid_tag' }])
  t.same((await events('&tag_ids=floor-1', ACME)).data, everything.data, 'its own tag is known')
  t.same((await events('&tag_ids=empty', ACME)).errors, [{ id: 'empty', item_type: 'tag', message: 'invalid_tag' }], 'a tag without members is in no scope that does not name it')
  t.same((await events('&device_ids=soap-001', ACME)).errors, [], 'a device in a space of the scope is known')

  const soap = await events('', SOAP)
  t.ok(soap.data.length > 0)
  t.ok(soap.data.every((event: { device_id?: string }) => event.device_id === 'soap-001'), 'a device scope: that device\'s events only')
  t.same((await events('&space_ids=bldg-a/floor-1', SOAP)).errors, [{ id: 'bldg-a/floor-1', item_type: 'space', message: 'invalid_space' }], 'the device\'s space is not in its scope')
  t.same((await events('&message_ids=e-02', SOAP)).data, [], 'message_ids cannot reach outside the scope')

  const specifications = await app.inject({ url: '/svc/v2/event_specifications', headers: bearer(SOAP) })
  t.equal(specifications.statusCode, 200, 'specifications are not scoped')
})

t.test('TOKENS_FILE: ingest rights, hashes in any case, unscoped tokens keep working', async (t) => {
  const dir = t.testdir()
  copyFileSync(join(fixturesDir, 'events.ndjson'), join(dir, 'events.ndjson'))
  const app = await build(t, { tokensFile: tokensFile(dir, standardTokens), eventsFile: join(dir, 'events.ndjson') })
  const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...headers, 'content-type': 'application/x-ndjson' }, payload: '' })
  t.equal((await post(bearer(FEEDER))).statusCode, 200, 'ingest: true posts')
  t.equal((await post(bearer(ACME))).statusCode, 403, 'a consumer token of the file does not')
  t.equal((await post(INGEST_AUTH)).statusCode, 200, 'INGEST_TOKENS still post')
  t.equal((await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(FEEDER) })).statusCode, 200, 'a file token reads')
  t.equal((await app.inject({ url: `/svc/v2/events?${START}`, headers: AUTH })).statusCode, 200, 'API_TOKENS still read')
  t.equal((await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer('unknown') })).statusCode, 401)
})

t.test('a bad TOKENS_FILE stops start-up naming the entry', async (t) => {
  const cases: Array<[string, unknown[], RegExp]> = [
    ['an unknown field', [{ name: 'a', sha256: tokenDigest('x') }, { name: 'acme-fm', sha256: tokenDigest('y'), scopes: {} }], /tokens\.json: entry tokens\[1\] \("acme-fm"\)\.scopes: unexpected property/],
    // Not repeated: an operator who pasted the token itself would have it written to the logs.
    ['a bad hash', [{ name: 'acme-fm', sha256: 'abc' }], /tokens\.json: entry tokens\[0\] \("acme-fm"\)\.sha256: is not the hex SHA-256 of the token \(its value is not repeated: it may be the token itself\)$/],
    ['the token itself as its hash', [{ name: 'acme-fm', sha256: ACME }], /^(?![\s\S]*acme-secret-token)[\s\S]*\.sha256: is not the hex SHA-256/],
    ['an entry without a name', [{ sha256: tokenDigest('x') }], /tokens\.json: entry tokens\[0\]\.name: expected required property/],
    ['a name that is no string', [{ name: 7, sha256: tokenDigest('x') }], /tokens\.json: entry tokens\[0\]\.name: /],
    ['a name as logs give a JWT\'s', [{ name: 'jwt:client-x', sha256: tokenDigest('x') }], /tokens\.json: entry tokens\[0\] \("jwt:client-x"\)\.name: /],
    ['an unknown entity in a scope', [{ name: 'a', sha256: tokenDigest('x') }, { name: 'b', sha256: tokenDigest('y'), scope: { device_ids: ['ghost'] } }], /entry tokens\[1\] \("b"\)\.scope: unknown device "ghost"/],
    ['a repeated name', [{ name: 'a', sha256: tokenDigest('x') }, { name: 'a', sha256: tokenDigest('y') }], /entry tokens\[1\] \("a"\): the name is already used by tokens\[0\]/],
    // Its scope would be ignored: the configured token, which sees everything, is looked up first.
    ['a token also in API_TOKENS', [{ name: 'legacy', sha256: tokenDigest(TOKEN), scope: { device_ids: ['soap-001'] } }], /entry tokens\[0\] \("legacy"\): its token is also in API_TOKENS or INGEST_TOKENS/],
    ['a token also in INGEST_TOKENS', [{ name: 'feeder', sha256: tokenDigest(INGEST_TOKEN), ingest: true }], /entry tokens\[0\] \("feeder"\): its token is also in API_TOKENS or INGEST_TOKENS/]
  ]
  for (const [what, tokens, message] of cases) {
    const error = await build(t, { tokensFile: tokensFile(t.testdir(), tokens) }).then(() => undefined, (failure: unknown) => failure)
    t.ok(error instanceof DataFileError, `${what}: refused`)
    t.match((error as Error).message, message, `${what}: the message names it`)
  }
  // A token pasted without quotes: JSON.parse's message quotes the text around the fault.
  const unquoted = join(t.testdir(), 'tokens.json')
  writeFileSync(unquoted, '{ "tokens": [\n  { "name": "acme-fm", "sha256": acme-secret-token }\n] }')
  const error = await build(t, { tokensFile: unquoted }).then(() => undefined, (failure: unknown) => failure)
  t.ok(error instanceof DataFileError)
  t.match((error as Error).message, /tokens\.json: line 2: invalid JSON/, 'the line is named')
  t.notMatch((error as Error).message, /secret/, 'nothing of the token')
})

t.test('the stream is scoped the same way', async (t) => {
  const dir = t.testdir()
  copyFileSync(join(fixturesDir, 'events.ndjson'), join(dir, 'events.ndjson'))
  const app = await build(t, { tokensFile: tokensFile(dir, standardTokens), eventsFile: join(dir, 'events.ndjson') })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { SseClient } = await import('./live/sse-client.js')
  const port = (app.server.address() as { port: number }).port
  const client = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream`, bearer(SOAP))
  t.teardown(() => client.close())
  await client.until((c) => c.status === 200)
  const line = (id: string, device: string, space: string) => JSON.stringify({ message_id: id, message_code: 'EMPTY', message_category: 'alert', date_time: '2025-09-01T00:00:00Z', device_id: device, space_id: space })
  await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: [line('in', 'soap-001', 'bldg-a/floor-1'), line('out', 'towel-002', 'bldg-a/floor-1')].join('\n') })
  await client.until((c) => c.messages.length >= 1)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(client.messages.map((frame) => JSON.parse(frame.data!).message_id), ['in'])
  const outside = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream?device_ids=towel-002`, bearer(SOAP))
  t.teardown(() => outside.close())
  await outside.until((c) => c.frames.length >= 1)
  t.same(outside.frames[0], { event: 'item_errors', data: JSON.stringify([{ id: 'towel-002', item_type: 'device', message: 'invalid_device' }]) }, 'a device outside the scope is unknown to the stream too')
})

t.test('a scoped ingest token writes only within its scope; outside it, as for unknown entities, and nothing is learnt of what others have', async (t) => {
  const dir = t.testdir()
  copyFileSync(join(fixturesDir, 'events.ndjson'), join(dir, 'events.ndjson'))
  const SOAP_FEEDER = 'soap-feeder-token'
  const tokens = [...standardTokens, { name: 'soap-feeder', sha256: tokenDigest(SOAP_FEEDER), scope: { device_ids: ['soap-001'] }, ingest: true }]
  const app = await build(t, { tokensFile: tokensFile(dir, tokens), eventsFile: join(dir, 'events.ndjson') })
  const line = (id: string, where: { device_id?: string, space_id?: string }) => JSON.stringify({ message_id: id, message_code: 'EMPTY', message_category: 'alert', date_time: '2025-09-01T00:00:00Z', ...where })
  const post = async (lines: string[]) => (await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...bearer(SOAP_FEEDER), 'content-type': 'application/x-ndjson' }, payload: lines.join('\n') })).json()
  const stored = (await app.inject({ url: `/svc/v2/events?${START}&device_ids=counter'003`, headers: AUTH })).json().data[0]
  t.ok(stored !== undefined, 'another tenant\'s stored event')
  const answer = await post([
    line('mine', { device_id: 'soap-001', space_id: 'bldg-a/floor-1' }),
    line('theirs', { device_id: 'counter\'003', space_id: 'bldg-a/floor-1' }),
    line('nobody', { device_id: 'no-such-device', space_id: 'bldg-a/floor-1' }),
    line('their-space', { space_id: 'bldg-a/floor-2' }),
    line('no-space', { space_id: 'no-such-space' }),
    line('moved-into-theirs', { device_id: 'soap-001', space_id: 'bldg-a/floor-2' }),
    line('moved-nowhere', { device_id: 'soap-001', space_id: 'no-such-space' }),
    JSON.stringify(stored)
  ])
  t.equal(answer.written, 1, 'its own device\'s event in its own space is written')
  t.equal(answer.unchanged, 0, 'another tenant\'s event posted again is not confirmed as stored')
  t.same(answer.refused, [
    { line: 2, reason: 'device "counter\'003" is not in the entities file' },
    { line: 3, reason: 'device "no-such-device" is not in the entities file' },
    { line: 4, reason: 'space "bldg-a/floor-2" is not in the entities file' },
    { line: 5, reason: 'space "no-such-space" is not in the entities file' },
    { line: 6, reason: 'space "bldg-a/floor-2" is neither the device\'s space nor in this token\'s scope' },
    { line: 7, reason: 'space "no-such-space" is neither the device\'s space nor in this token\'s scope' },
    { line: 8, reason: 'device "counter\'003" is not in the entities file' }
  ], 'outside the scope reads exactly as unknown')
  const theirs = (await app.inject({ url: `/svc/v2/events?${START}&device_ids=counter'003`, headers: AUTH })).json().data
  t.notOk(theirs.some((event: { message_id: string }) => event.message_id === 'theirs'), 'nothing written into another tenant\'s answers')
  const unscoped = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...bearer(FEEDER), 'content-type': 'application/x-ndjson' }, payload: line('anywhere', { device_id: 'counter\'003', space_id: 'bldg-a/floor-1' }) })
  t.equal(unscoped.json().written, 1, 'an unscoped ingest token writes for every known entity')
})

t.test('logs name the token, never the token itself; a reloaded file is taken', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const dir = t.testdir()
  const file = tokensFile(dir, standardTokens)
  const app = await build(t, { tokensFile: file, logLevel: 'debug' }, { logger: { level: 'debug', stream } })
  await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(ACME) })
  // A request Node cannot parse: its error carries the raw bytes read, token included.
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { connect } = await import('node:net')
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1', () => {
    socket.write(`GET /svc/v2/events?${START} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ACME}\r\nBad Header: y\r\n\r\n`)
  })
  socket.on('data', () => {})
  await new Promise((resolve) => socket.on('close', resolve))
  const logged = lines.join('')
  t.match(logged, '"token":"acme-fm"')
  t.match(logged, 'a request that could not be read', 'the unreadable request is logged')
  t.notMatch(logged, ACME)
  t.notMatch(logged, 'rawPacket', 'without the bytes it was read from')

  const later = 'a-later-token'
  writeFileSync(file, JSON.stringify({ tokens: [...standardTokens, { name: 'later', sha256: tokenDigest(later) }] }))
  const deadline = Date.now() + 5000
  while (Date.now() < deadline && (await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(later) })).statusCode !== 200) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal((await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(later) })).statusCode, 200, 'a token added to the file works once it is reloaded')
})

/**
 * A provider with the standard tokens, whose ENTITIES_FILE then drops soap-001 while the token
 * soap-watch is scoped to it (changed on disk, and signalled when `hangUp`): once the refusal is
 * logged, or after 5 s.
 */
async function soapRetiredUnderItsToken (t: Test, hangUp: boolean) {
  const dir = t.testdir()
  const file = tokensFile(dir, standardTokens)
  const entitiesFile = join(dir, 'entities.json')
  copyFileSync(join(fixturesDir, 'entities.json'), entitiesFile)
  const lines: string[] = []
  const logs = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { tokensFile: file, entitiesFile }, { logger: { level: 'info', stream: logs } })
  const soapErrors = async () => (await app.inject({ url: `/svc/v2/events?${START}&device_ids=soap-001`, headers: AUTH })).json().errors
  const until = async (done: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 5000
    while (Date.now() < deadline && !(await done())) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const entities = JSON.parse(readFileSync(entitiesFile, 'utf8'))
  entities.devices = entities.devices.filter((device: { id: string }) => device.id !== 'soap-001')
  for (const tag of entities.tags) tag.device_ids = tag.device_ids.filter((id: string) => id !== 'soap-001')
  writeFileSync(entitiesFile, JSON.stringify(entities))
  if (hangUp) process.kill(process.pid, 'SIGHUP')
  const refusal = /reload failed, the previous version stays in service: [^\n]*soap-watch[^\n]*soap-001/
  await until(() => refusal.test(lines.join('')))
  return { app, file, lines, refusal, soapErrors, until }
}

t.test('a registry reload that would leave a token of the file in service naming an entity it lost is refused, so that later reloads of TOKENS_FILE (a revocation) still load', async (t) => {
  const { app, file, lines, refusal, soapErrors, until } = await soapRetiredUnderItsToken(t, true)
  t.match(lines.join(''), refusal, 'the reload is refused, saying which token names what')
  t.same(await soapErrors(), [], 'the registry in service is kept')

  // A revocation: acme-fm taken out of the file. Its reload loads (the registry still has soap-001).
  const revoked = standardTokens.filter((token) => token.name !== 'acme-fm')
  writeFileSync(file, JSON.stringify({ tokens: revoked }))
  await until(async () => (await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(ACME) })).statusCode === 401)
  t.equal((await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(ACME) })).statusCode, 401, 'the revoked token is refused')

  // The token's scope changed first, then the registry reloaded: it loads.
  writeFileSync(file, JSON.stringify({ tokens: revoked.map((token) => token.name === 'soap-watch' ? { ...token, scope: { device_ids: ['towel-002'] } } : token) }))
  process.kill(process.pid, 'SIGHUP')
  await until(async () => (await soapErrors()).length > 0)
  t.same(await soapErrors(), [{ id: 'soap-001', item_type: 'device', message: 'invalid_device' }], 'the registry without soap-001 is in service')
})

t.test('npm run token: a new random token and its entry, with the scope asked for', async (t) => {
  const { token, entry } = newToken(['--name', 'acme-fm', '--tag', 'site-ams-hq', '--device', 'd1', '--device', 'd2', '--ingest'])
  t.ok(token.length >= 40)
  t.same(entry, { name: 'acme-fm', sha256: tokenDigest(token), scope: { tag_ids: ['site-ams-hq'], device_ids: ['d1', 'd2'] }, ingest: true })
  t.not(newToken(['--name', 'x']).token, newToken(['--name', 'x']).token)
  const printed = t.capture(console, 'log')
  const complained = t.capture(console, 'error')
  t.equal(tokenCommand(['--help']), 0, '--help is no error')
  t.match(printed()[0]?.args[0], /^usage: npm run token -- --name NAME/)
  t.same(complained(), [])
  t.equal(tokenCommand(['--nmae', 'x']), 2, 'an unknown option is')
  t.match(complained()[0]?.args[0], /Unknown option '--nmae'/)
  t.same(newToken(['--name', 'x']).entry.scope, undefined, 'no scope: every entity')
  t.throws(() => newToken(['--tag', 'x']), 'a name is required')
  t.throws(() => newToken(['--name', 'jwt:x']), /--name must be .*not beginning with jwt:/, 'a name the file would refuse is refused here')
  t.throws(() => newToken(['--name', 'a b']), /--name must be/)
})

t.test('an open stream ends when its token is revoked or scoped otherwise, or when the registry changes what its scope covers; the others stay', async (t) => {
  const dir = t.testdir()
  copyFileSync(join(fixturesDir, 'events.ndjson'), join(dir, 'events.ndjson'))
  const entitiesFile = join(dir, 'entities.json')
  copyFileSync(join(fixturesDir, 'entities.json'), entitiesFile)
  const file = tokensFile(dir, standardTokens)
  const lines: string[] = []
  const logs = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { tokensFile: file, eventsFile: join(dir, 'events.ndjson'), entitiesFile }, { logger: { level: 'info', stream: logs } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { SseClient } = await import('./live/sse-client.js')
  const port = (app.server.address() as { port: number }).port
  const open = async (token: string) => {
    const client = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream`, bearer(token))
    t.teardown(() => client.close())
    await client.until((c) => c.status === 200)
    return client
  }
  const acme = await open(ACME)
  const soap = await open(SOAP)
  const unscoped = await open('test-token-1')

  // The file again, without soap-watch: its stream ends, the others go on.
  writeFileSync(file, JSON.stringify({ tokens: standardTokens.filter((entry) => entry.name !== 'soap-watch') }))
  await soap.until((c) => c.ended, 5000, 'the revoked token\'s stream to end')
  t.notOk(acme.ended, 'a token still in the file keeps its stream')
  const again = await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(SOAP) })
  t.equal(again.statusCode, 401, 'and the revoked token is refused from now on')
  t.match(lines.join(''), /"token":"soap-watch"[^\n]*"msg":"stream ended"/, 'the log names whose stream ended')
  t.notMatch(lines.join(''), SOAP, 'never the token itself')

  // The registry again, with floor-1's tag covering another space: the tag-scoped stream ends.
  const entities = JSON.parse(readFileSync(entitiesFile, 'utf8'))
  const floor1 = entities.tags.find((tag: { id: string }) => tag.id === 'floor-1')
  floor1.space_ids = [...floor1.space_ids, ...entities.spaces.map((space: { id: string }) => space.id).filter((id: string) => !floor1.space_ids.includes(id)).slice(0, 1)]
  writeFileSync(entitiesFile, JSON.stringify(entities))
  await acme.until((c) => c.ended, 5000, 'the stream whose scope now covers more to end')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.notOk(unscoped.ended, 'an unscoped stream goes on')
})

t.test('a replay\'s stream whose token is revoked while the store is asked whether it can answer is refused (401), not opened with the old token', async (t) => {
  const dir = t.testdir()
  const file = tokensFile(dir, standardTokens)
  const { store, asked, letGo } = storeWithHeldHealth()
  const app = await build(t, { tokensFile: file, store })
  const stream = app.inject({ url: `/svc/v2/events/stream?${START}`, headers: bearer(ACME) })
  while (!asked()) await new Promise((resolve) => setTimeout(resolve, 10))
  writeFileSync(file, JSON.stringify({ tokens: standardTokens.filter((entry) => entry.name !== 'acme-fm') }))
  while ((await app.inject({ url: `/svc/v2/events?${START}`, headers: bearer(ACME) })).statusCode !== 401) await new Promise((resolve) => setTimeout(resolve, 20))
  letGo()
  // A stream let in would never end here: its answer is waited for a while only.
  const answer = await Promise.race([stream, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000))])
  t.equal(answer?.statusCode, 401, 'the token is checked once the store has answered')
  t.same(answer?.json(), { status: 401, message: 'unauthorized_request' })
})

t.test('an open stream ends when a device moves out of (or into) the spaces of its scope; a stream whose scope it does not touch goes on', async (t) => {
  const dir = t.testdir()
  copyFileSync(join(fixturesDir, 'events.ndjson'), join(dir, 'events.ndjson'))
  const entitiesFile = join(dir, 'entities.json')
  copyFileSync(join(fixturesDir, 'entities.json'), entitiesFile)
  const app = await build(t, { tokensFile: tokensFile(dir, standardTokens), eventsFile: join(dir, 'events.ndjson'), entitiesFile })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { SseClient } = await import('./live/sse-client.js')
  const port = (app.server.address() as { port: number }).port
  const open = async (token: string, query = '') => {
    const client = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream${query}`, bearer(token))
    t.teardown(() => client.close())
    await client.until((c) => c.status === 200)
    return client
  }
  // acme-fm's tag covers the space bldg-a/floor-1, and so towel-002, whose space it is.
  const acme = await open(ACME, '?device_ids=towel-002')
  const soap = await open(SOAP)
  const entities = JSON.parse(readFileSync(entitiesFile, 'utf8'))
  entities.devices.find((device: { id: string }) => device.id === 'towel-002').space_id = 'bldg-a/floor-2'
  writeFileSync(entitiesFile, JSON.stringify(entities))
  await acme.until((c) => c.ended, 5000, 'the stream whose scope lost towel-002 to end')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.notOk(soap.ended, 'a stream whose scope the move does not touch goes on')
  const again = await app.inject({ url: `/svc/v2/events?${START}&device_ids=towel-002`, headers: bearer(ACME) })
  t.same(again.json().errors, [{ id: 'towel-002', item_type: 'device', message: 'invalid_device' }], 'as a new request would see it')
})

t.test('a stream ended for its token is destroyed soon after when its client leaves the connection half open: it cannot outlive the stream limit', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'tokens.json')
  const token = 'revoked-soon-token'
  writeFileSync(file, JSON.stringify({ tokens: [{ name: 'soon', sha256: tokenDigest(token) }] }))
  const app = await build(t, { tokensFile: file })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const { connect } = await import('node:net')
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
    socket.write(`GET /svc/v2/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`)
  })
  t.teardown(() => socket.destroy())
  let received = ''
  let ended = false
  socket.on('data', (chunk) => { received += chunk })
  socket.on('end', () => { ended = true })
  const until = async (done: () => boolean, what: string) => {
    const deadline = Date.now() + 5000
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  await until(() => received.startsWith('HTTP/1.1 200'), 'the stream')
  writeFileSync(file, JSON.stringify({ tokens: [] }))
  await until(() => ended, 'the server to end the stream')
  // The client never ends its side: the server destroys the connection within a few seconds.
  const connections = () => new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count)))
  let open = await connections()
  const deadline = Date.now() + 5000
  while (open > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    open = await connections()
  }
  t.equal(open, 0, 'no connection left on the server')
})

t.test('a registry refused for a token of the file is loaded once TOKENS_FILE changes that token, without a hang-up', async (t) => {
  // Before: the refused version was never loaded again (the watch and the poll had seen it), so
  // the registry stayed old after the operator did as the refusal asked, and a worker started
  // later loaded the new one: workers answered differently.
  const { file, lines, refusal, soapErrors, until } = await soapRetiredUnderItsToken(t, false)
  t.match(lines.join(''), refusal, 'the registry is refused, saying which token names what')
  writeFileSync(file, JSON.stringify({ tokens: standardTokens.filter((token) => token.name !== 'soap-watch') }))
  await until(async () => (await soapErrors()).length > 0)
  t.same(await soapErrors(), [{ id: 'soap-001', item_type: 'device', message: 'invalid_device' }], 'the registry on disk is in service')
})

t.test('an ingest whose token is revoked or narrowed while its body comes is judged by the token as it is then', async (t) => {
  // Before: the rights it was let in with wrote it, up to REQUEST_TIMEOUT_MS after a revocation.
  const dir = t.testdir()
  copyFileSync(join(fixturesDir, 'events.ndjson'), join(dir, 'events.ndjson'))
  const file = tokensFile(dir, standardTokens)
  const app = await build(t, { tokensFile: file, eventsFile: join(dir, 'events.ndjson') })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const line = (id: string) => JSON.stringify({ message_id: id, message_code: 'EMPTY', message_category: 'alert', date_time: '2025-09-01T00:00:00Z', device_id: 'soap-001', space_id: 'bldg-a/floor-1' })
  const until = async (done: () => Promise<boolean>) => {
    const deadline = Date.now() + 5000
    while (Date.now() < deadline && !(await done())) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  /** Posts the body in two parts, changing TOKENS_FILE between them (taken once `changed` holds). */
  const postAcrossChange = async (body: string, tokens: unknown[], changed: () => Promise<boolean>) => {
    const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/ingest/events', headers: { ...bearer(FEEDER), 'content-type': 'application/x-ndjson', 'content-length': String(Buffer.byteLength(body)) } })
    const answered = new Promise<{ status: number, body: string }>((resolve, reject) => {
      request.on('response', (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => { resolve({ status: response.statusCode!, body: text }) })
      }).on('error', reject)
    })
    request.write(body.slice(0, 20))
    await new Promise((resolve) => setTimeout(resolve, 100))
    writeFileSync(file, JSON.stringify({ tokens }))
    await until(changed)
    request.end(body.slice(20))
    return await answered
  }
  const lineOf = async (id: string) => (await app.inject({ url: `/svc/v2/events?${START}&message_ids=${id}`, headers: AUTH })).json().data.length as number
  const post = (token: string) => app.inject({ method: 'POST', url: '/ingest/events', headers: { ...bearer(token), 'content-type': 'application/x-ndjson' }, payload: '' })

  // Narrowed to another device: its event of soap-001 is refused, as outside its scope.
  let probes = 0
  const narrowed = standardTokens.map((token) => token.name === 'feeder' ? { ...token, scope: { device_ids: ['towel-002'] } } : token)
  const soapOnly = (await postAcrossChange(line('narrowed-meanwhile'), narrowed, async () => (await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...bearer(FEEDER), 'content-type': 'application/x-ndjson' }, payload: line(`probe-${++probes}`) })).json().refused.length === 1))
  t.equal(soapOnly.status, 200)
  t.same(JSON.parse(soapOnly.body).written, 0, 'nothing written outside the scope it has now')
  t.equal(await lineOf('narrowed-meanwhile'), 0)

  // Revoked: 401, nothing written.
  const revoked = await postAcrossChange(line('revoked-meanwhile'), standardTokens.filter((token) => token.name !== 'feeder'), async () => (await post(FEEDER)).statusCode === 401)
  t.equal(revoked.status, 401)
  t.same(JSON.parse(revoked.body), { status: 401, message: 'unauthorized_request' })
  t.equal(await lineOf('revoked-meanwhile'), 0, 'nothing written')
})
