import t from 'tap'
import { copyFileSync } from 'node:fs'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { generateKeyPair, SignJWT, type JSONWebKeySet } from 'jose'
import { unusableKeys } from '../../src/auth/jwks-keys.js'
import { build, fixturesDir } from '../helper.js'
import { SseClient } from '../live/sse-client.js'
import { startJwksServer } from './jwks-server.js'

const START = 'start_date=2024-01-01T00:00:00Z'

/** An app taking the tokens of the key set at `jwksUrl` (the test's JWT settings), and the status a token's events request gets. */
async function jwtApp (t: Parameters<typeof build>[0], jwksUrl: string, jwt: { cooldownMs?: number, maxAgeMs?: number }) {
  const app = await build(t, { jwt: { jwksUrl, issuer: 'https://idp.test', audience: 'events-provider', ...jwt } })
  const status = async (token: string) => (await app.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${token}` } })).statusCode
  return { app, status }
}

t.test('OAuth2 access tokens: a JWT of the configured issuer and audience, signed by a key of the JWKS', async (t) => {
  const jwks = await startJwksServer(t)
  const rsa = await jwks.addKey('RS256', 'rsa-1')
  const app = await build(t, { jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 } })
  const events = (token: string, query = '') => app.inject({ url: `/svc/v2/events?${START}${query}`, headers: { authorization: `Bearer ${token}` } })

  const unscoped = await events(await jwks.sign(rsa, { sub: 'client-a' }))
  t.equal(unscoped.statusCode, 200, 'RS256, no scope claims: every entity')
  const all = unscoped.json().data.length

  const scoped = await events(await jwks.sign(rsa, { sub: 'client-b', device_ids: ['soap-001'] }))
  t.ok(scoped.json().data.length > 0 && scoped.json().data.length < all)
  t.ok(scoped.json().data.every((event: { device_id?: string }) => event.device_id === 'soap-001'), 'scope from the claims')
  const outside = await events(await jwks.sign(rsa, { sub: 'client-b', device_ids: ['soap-001'] }), '&device_ids=towel-002')
  t.same(outside.json().errors, [{ id: 'towel-002', item_type: 'device', message: 'invalid_device' }], 'outside its scope is unknown')

  const ec = await jwks.addKey('ES256', 'ec-1')
  t.equal((await events(await jwks.sign(ec, { sub: 'client-c', tag_ids: ['floor-1'] }))).statusCode, 200, 'ES256, and a key added to the set is fetched for its unknown kid')

  const refused = async (token: string, what: string) => {
    const answer = await events(token)
    t.equal(answer.statusCode, 401, what)
    t.same(answer.json(), { status: 401, message: 'unauthorized_request' })
  }
  await refused(await jwks.sign(rsa, { sub: 'x' }, { expiresIn: Math.floor(Date.now() / 1000) - 60 }), 'expired')
  await refused(await jwks.sign(rsa, { sub: 'x' }, { issuer: 'https://elsewhere.test' }), 'another issuer')
  await refused(await jwks.sign(rsa, { sub: 'x' }, { audience: 'someone-else' }), 'another audience')
  const forger = await generateKeyPair('RS256')
  await refused(await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).setIssuer('https://idp.test').setAudience('events-provider').setExpirationTime('5m').sign(forger.privateKey), 'a bad signature (another key, the same kid)')
  await refused(await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('https://idp.test').setAudience('events-provider').setExpirationTime('5m').sign(new TextEncoder().encode('a shared secret of 32 bytes!!!!!')), 'HS256 is not accepted')
  await refused(await jwks.sign(rsa, { sub: 'x', device_ids: 'soap-001' }), 'a malformed scope claim')
  await refused('not.a.jwt', 'garbage of a JWT\'s shape')
})

t.test('the JWT variables go together', async (t) => {
  const { loadConfig, ConfigError } = await import('../../src/config.js')
  t.throws(() => loadConfig({ JWT_JWKS_URL: 'https://idp.test/jwks' }), ConfigError)
  t.throws(() => loadConfig({ JWT_JWKS_URL: 'https://idp.test/jwks' }), /JWT_ISSUER and JWT_AUDIENCE must be set too/)
  t.same(loadConfig({ JWT_JWKS_URL: 'https://idp.test/jwks', JWT_ISSUER: 'i', JWT_AUDIENCE: 'a' }).jwt, { jwksUrl: 'https://idp.test/jwks', issuer: 'i', audience: 'a' })
})

t.test('a stream opened with a JWT ends when the JWT expires', async (t) => {
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-stream')
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  const app = await build(t, { eventsFile, jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const token = await jwks.sign(key, { sub: 'short-lived', device_ids: ['soap-001'] }, { expiresIn: Math.floor(Date.now() / 1000) + 2 })
  const lasting = await jwks.sign(key, { sub: 'long-lived', device_ids: ['soap-001'] }, { expiresIn: Math.floor(Date.now() / 1000) + 3600 })
  const short = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream`, { authorization: `Bearer ${token}` })
  const long = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream`, { authorization: `Bearer ${lasting}` })
  t.teardown(() => { short.close(); long.close() })
  await short.until((c) => c.status === 200)
  await long.until((c) => c.status === 200)
  await short.until((c) => c.ended, 5000, 'the stream of the expired JWT to end')
  t.notOk(long.ended, 'a JWT still valid keeps its stream')
  const again = await app.inject({ url: '/svc/v2/events?start_date=2024-01-01T00:00:00Z', headers: { authorization: `Bearer ${token}` } })
  t.equal(again.statusCode, 401, 'and the expired JWT is refused')
})

t.test('RATE_LIMIT counts each JWT client on its own: by sub, else client_id, else the token; never with a named token of a like name', async (t) => {
  const { writeFileSync } = await import('node:fs')
  const { tokenDigest } = await import('../../src/http/bearer-token.js')
  const jwks = await startJwksServer(t)
  const rsa = await jwks.addKey('RS256', 'rsa-rate')
  const tokensFile = join(t.testdir(), 'tokens.json')
  // Named as the JWT's subject (a name may not begin with jwt:, as logs call a JWT's).
  writeFileSync(tokensFile, JSON.stringify({ tokens: [{ name: 'client-a', sha256: tokenDigest('named-like-a-jwt-client') }] }))
  const app = await build(t, { tokensFile, rateLimit: { max: 2, windowMs: 60_000, text: '2/minute' }, jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 } })
  const status = async (token: string) => (await app.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${token}` } })).statusCode
  const clientA = await jwks.sign(rsa, { sub: 'client-a' })
  t.same([await status(clientA), await status(clientA), await status(clientA)], [200, 200, 429], 'client-a used its limit')
  t.equal(await status(await jwks.sign(rsa, { sub: 'client-a' })), 429, 'another token of client-a: the same client')
  t.equal(await status('named-like-a-jwt-client'), 200, 'the named token "client-a" is another consumer')
  const byClientId = await jwks.sign(rsa, { client_id: 'machine-1' })
  t.same([await status(byClientId), await status(byClientId), await status(byClientId)], [200, 200, 429], 'a client_id without sub')
  t.equal(await status(await jwks.sign(rsa, { client_id: 'machine-2' })), 200, 'another client_id')
  t.equal(await status(await jwks.sign(rsa, { sub: 'machine-1' })), 200, 'a sub equal to another client\'s client_id is another client')
  const anonymous = await jwks.sign(rsa, { sub: '' })
  t.same([await status(anonymous), await status(anonymous), await status(anonymous)], [200, 200, 429], 'neither: counted by the token')
  t.equal(await status(await jwks.sign(rsa, { sub: '', device_ids: ['soap-001'] })), 200, 'another token without either (an empty sub names nothing): a count of its own')
})

/** Polls until `check` holds, or fails after `ms`. */
async function eventually (check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

t.test('a key withdrawn from the key set is refused once the keys are fetched again, for new tokens and for tokens verified before', async (t) => {
  const jwks = await startJwksServer(t)
  const withdrawn = await jwks.addKey('RS256', 'rsa-withdrawn')
  await jwks.addKey('ES256', 'ec-kept')
  const { status } = await jwtApp(t, jwks.url, { cooldownMs: 0, maxAgeMs: 200 })
  const before = await jwks.sign(withdrawn, { sub: 'client-a' })
  t.equal(await status(before), 200)
  jwks.keys.splice(jwks.keys.indexOf(withdrawn), 1)
  t.ok(await eventually(async () => await status(await jwks.sign(withdrawn, { sub: 'client-b' })) === 401), 'a new token signed with the withdrawn key is refused')
  t.ok(await eventually(async () => await status(before) === 401), 'and the token verified before it was withdrawn')
  t.equal(await status(await jwks.sign(jwks.keys[0]!, { sub: 'client-c' })), 200, 'the key kept still verifies')
})

t.test('the identity provider is asked at most once per cooldown while it fails, and the keys it gave before keep serving', async (t) => {
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-1')
  const { privateKey } = await generateKeyPair('RS256')
  const forged = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'forged' }).setIssuer('https://idp.test').setAudience('events-provider').setExpirationTime('5m').sign(privateKey)
  const status = async (app: Awaited<ReturnType<typeof build>>, token: string) => (await app.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${token}` } })).statusCode

  jwks.mode = 'fail'
  const cold = await build(t, { jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 60_000 } })
  const statuses = []
  for (let i = 0; i < 20; i++) statuses.push(await status(cold, forged))
  t.same(new Set(statuses), new Set([401]))
  t.equal(jwks.fetches, 1, '20 forged tokens made one fetch, not one each')

  jwks.mode = 'normal'
  const warm = await build(t, { jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 100, maxAgeMs: 100 } })
  t.equal(await status(warm, await jwks.sign(key, { sub: 'a' })), 200)
  jwks.mode = 'fail'
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(await status(warm, await jwks.sign(key, { sub: 'b' })), 200, 'keys past their age serve while their identity provider is down')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(await status(warm, await jwks.sign(key, { sub: 'c' })), 200, 'and after a failed fetch too')
})

t.test('a key set larger than 1 MiB is not read whole: the fetch fails and the token is refused', async (t) => {
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-1')
  jwks.mode = 'huge'
  const app = await build(t, { jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 } })
  const answer = await app.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${await jwks.sign(key, { sub: 'a' })}` } })
  t.equal(answer.statusCode, 401)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.ok(jwks.hugeBytesSent < 16 * 1024 * 1024, `the provider stopped reading (${jwks.hugeBytesSent} of 64 MiB sent)`)
})

t.test('a stream opened with a JWT ends once its key is withdrawn from the key set; a stream of a key kept goes on', async (t) => {
  const jwks = await startJwksServer(t)
  const withdrawn = await jwks.addKey('RS256', 'rsa-going')
  const kept = await jwks.addKey('ES256', 'ec-staying')
  const eventsFile = join(t.testdir(), 'events.ndjson')
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  const app = await build(t, { eventsFile, jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0, maxAgeMs: 300 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port
  const url = `http://127.0.0.1:${port}/svc/v2/events/stream`
  const going = new SseClient(url, { authorization: `Bearer ${await jwks.sign(withdrawn, { sub: 'going' }, { expiresIn: '1h' })}` })
  const staying = new SseClient(url, { authorization: `Bearer ${await jwks.sign(kept, { sub: 'staying' }, { expiresIn: '1h' })}` })
  t.teardown(() => { going.close(); staying.close() })
  await going.until((c) => c.status === 200)
  await staying.until((c) => c.status === 200)
  jwks.keys.splice(jwks.keys.indexOf(withdrawn), 1)
  await going.until((c) => c.ended, 5000, 'the stream of the withdrawn key to end')
  t.ok(going.ended)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.notOk(staying.ended, 'the stream of the key kept goes on past several checks')
})

t.test('after a quiet spell, keys past their age are fetched again before a token is judged: a key withdrawn meanwhile is refused at once', async (t) => {
  const jwks = await startJwksServer(t)
  const withdrawn = await jwks.addKey('RS256', 'rsa-quiet')
  await jwks.addKey('ES256', 'ec-quiet')
  const { status } = await jwtApp(t, jwks.url, { cooldownMs: 0, maxAgeMs: 200 })
  t.equal(await status(await jwks.sign(withdrawn, { sub: 'a' })), 200)
  jwks.keys.splice(jwks.keys.indexOf(withdrawn), 1)
  await new Promise((resolve) => setTimeout(resolve, 400))
  t.equal(await status(await jwks.sign(withdrawn, { sub: 'b' }, { expiresIn: '10y' })), 401, 'the first token after the quiet spell')
})

t.test('the key set is not taken from a redirect, and a byte order mark before it is no fault', async (t) => {
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-1')
  const redirecting = createServer((request, response) => { response.writeHead(302, { location: jwks.url }).end() })
  redirecting.listen(0, '127.0.0.1')
  await once(redirecting, 'listening')
  t.teardown(() => { redirecting.close() })
  const redirected = await build(t, { jwt: { jwksUrl: `http://127.0.0.1:${(redirecting.address() as { port: number }).port}/jwks`, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 } })
  const token = await jwks.sign(key, { sub: 'a' })
  t.equal((await redirected.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${token}` } })).statusCode, 401, 'a redirect is a failed fetch, as jose had it')

  const withBom = createServer((request, response) => { response.writeHead(200, { 'content-type': 'application/json' }).end('\uFEFF' + JSON.stringify({ keys: jwks.keys.map((k) => k.jwk) })) })
  withBom.listen(0, '127.0.0.1')
  await once(withBom, 'listening')
  t.teardown(() => { withBom.close() })
  const bom = await build(t, { jwt: { jwksUrl: `http://127.0.0.1:${(withBom.address() as { port: number }).port}/jwks`, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 } })
  t.equal((await bom.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
})

t.test('concurrent checks of one token share one verification (many streams of one client re-checked at once)', async (t) => {
  const { createJwtVerifier } = await import('../../src/auth/jwt-verifier.js')
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-shared')
  const verify = createJwtVerifier({ jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider', cooldownMs: 0 })
  const token = await jwks.sign(key, { sub: 'many-streams' })
  type Subtle = typeof crypto.subtle
  const subtle = Object.getPrototypeOf(crypto.subtle) as Subtle
  const original = subtle.verify
  let checks = 0
  subtle.verify = function (this: Subtle, ...args: Parameters<Subtle['verify']>) {
    checks++
    return original.apply(this, args)
  }
  t.teardown(() => { subtle.verify = original })
  const principals = await Promise.all(Array.from({ length: 30 }, async () => await verify(token)))
  t.ok(principals.every((principal) => principal?.name === 'jwt:many-streams'))
  t.equal(checks, 1, 'one signature check for 30 concurrent callers')
})

t.test('a kid the keys lack is fetched for at once, even right after a fetch (keys rotate); forged kids make a few fetches a cooldown, a kid fetched for in vain no more', async (t) => {
  const jwks = await startJwksServer(t)
  const first = await jwks.addKey('RS256', 'rsa-1')
  // The default cooldown (30 s): nothing here waits for it.
  const { status } = await jwtApp(t, jwks.url, {})
  t.equal(await status(await jwks.sign(first, { sub: 'a' })), 200)
  t.equal(jwks.fetches, 1)
  const rotated = await jwks.addKey('ES256', 'ec-2')
  t.equal(await status(await jwks.sign(rotated, { sub: 'a' })), 200, 'a key added a moment after the last fetch verifies at once')
  t.equal(jwks.fetches, 2)

  const { privateKey } = await generateKeyPair('RS256')
  const forged = (kid: string) => new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid }).setIssuer('https://idp.test').setAudience('events-provider').setExpirationTime('5m').sign(privateKey)
  const same = await forged('ghost')
  for (let i = 0; i < 10; i++) t.equal(await status(same), 401)
  t.equal(jwks.fetches, 3, 'one kid fetched for in vain is not fetched for again within the cooldown')
  for (let i = 0; i < 20; i++) t.equal(await status(await forged(`ghost-${i}`)), 401)
  t.ok(jwks.fetches <= 2 + 5, `forged kids made at most 5 fetches in all (${jwks.fetches - 2})`)
  t.equal(await status(await jwks.sign(first, { sub: 'a' })), 200, 'the keys held still serve')
})

t.test('a kid longer than 256 characters fetched for in vain is not remembered (its memory), and the budget still bounds its fetches', async (t) => {
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-1')
  const { status } = await jwtApp(t, jwks.url, {})
  t.equal(await status(await jwks.sign(key, { sub: 'a' })), 200)
  const { privateKey } = await generateKeyPair('RS256')
  const long = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: 'k'.repeat(300) }).setIssuer('https://idp.test').setAudience('events-provider').setExpirationTime('5m').sign(privateKey)
  for (let i = 0; i < 8; i++) t.equal(await status(long), 401)
  t.equal(jwks.fetches, 1 + 5, 'each time a fetch, until the budget of 5 is spent')
})

t.test('keys of the key set that can verify no token are named in a warning; the others serve', async (t) => {
  const jwks = await startJwksServer(t)
  const key = await jwks.addKey('RS256', 'rsa-1')
  const broken = { ...key, kid: 'broken', jwk: { kty: 'RSA', kid: 'broken', n: 'x' } }
  const encryption = { ...key, kid: 'enc', jwk: { ...key.jwk, kid: 'enc', use: 'enc' } }
  jwks.keys.push(broken, encryption)
  const lines: Array<{ level: number, msg: string }> = []
  const stream = { write: (line: string) => { lines.push(JSON.parse(line)) } }
  const app = await build(t, { jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider' } }, { logger: { level: 'warn', stream } })
  const answer = await app.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${await jwks.sign(key, { sub: 'a' })}` } })
  t.equal(answer.statusCode, 200, 'the usable key verifies')
  const warning = lines.find((line) => line.msg.startsWith('the JWT key set has keys that verify no token'))
  t.ok(warning, 'a warning is logged')
  t.match(warning?.msg, '1 of its 3 keys can verify tokens')
  t.match(warning?.msg, 'kid "broken" is not a valid public key')
  t.match(warning?.msg, 'kid "enc" is for "enc", not signatures')
  t.notMatch(warning?.msg, 'rsa-1')

  jwks.keys.splice(0, 3, key)
  const quiet: typeof lines = []
  const clean = await build(t, { jwt: { jwksUrl: jwks.url, issuer: 'https://idp.test', audience: 'events-provider' } }, { logger: { level: 'warn', stream: { write: (line: string) => { quiet.push(JSON.parse(line)) } } } })
  t.equal((await clean.inject({ url: `/svc/v2/events?${START}`, headers: { authorization: `Bearer ${await jwks.sign(key, { sub: 'b' })}` } })).statusCode, 200)
  t.same(quiet.filter((line) => line.msg.includes('key set')), [], 'a set of usable keys logs nothing')
})

t.test('a key set\'s keys that jose would pass over are all named: too short, private, key_ops without verify, a bad ext (found by review)', async (t) => {
  const { publicKey: short } = generateKeyPairSync('rsa', { modulusLength: 1024 })
  const { publicKey: good, privateKey: goodPrivate } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const { publicKey: ec } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = (key: KeyObject, extra: Record<string, unknown>) => ({ ...key.export({ format: 'jwk' }), ...extra })
  const set = {
    keys: [
      jwk(good, { kid: 'good' }),
      jwk(ec, { kid: 'ec', key_ops: ['verify'], ext: true }),
      jwk(short, { kid: 'short' }),
      jwk(goodPrivate, { kid: 'private' }),
      jwk(good, { kid: 'ops', key_ops: ['encrypt'] }),
      jwk(good, { kid: 'ext', ext: 'yes' })
    ]
  }
  const said = unusableKeys(set as unknown as JSONWebKeySet) ?? ''
  t.match(said, '2 of its 6 keys can verify tokens')
  t.match(said, 'kid "short" is of 1024 bits')
  t.match(said, 'kid "private" is a private key')
  t.match(said, 'kid "ops" has key_ops without "verify"')
  t.match(said, 'kid "ext" has an "ext" that is not true or false')
  t.notMatch(said, '"good"')
  t.notMatch(said, '"ec"')
  t.equal(unusableKeys({ keys: [set.keys[0], set.keys[1]] } as unknown as JSONWebKeySet), undefined, 'usable keys: nothing to say')
})
