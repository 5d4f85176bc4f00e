import t from 'tap'
import { AUTH, build, INGEST_AUTH, OTHER_TOKEN } from './helper.js'

const EVENTS = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'

t.test('RATE_LIMIT: per token, 429 in the error object with Retry-After and RateLimit headers; 401 first, then 429, then the parameters', async (t) => {
  const app = await build(t, { rateLimit: { max: 3, windowMs: 60_000, text: '3/minute' } })
  const statuses: number[] = []
  let last
  for (let i = 0; i < 4; i++) {
    last = await app.inject({ url: EVENTS, headers: AUTH })
    statuses.push(last.statusCode)
  }
  t.same(statuses, [200, 200, 200, 429])
  t.same(last!.json(), { status: 429, message: 'too_many_requests' })
  t.ok(Number(last!.headers['retry-after']) > 0, 'Retry-After')
  t.equal(last!.headers['ratelimit-limit'], '3')
  t.equal(last!.headers['ratelimit-remaining'], '0')
  t.ok(last!.headers['ratelimit-reset'] !== undefined)
  t.equal((await app.inject({ url: EVENTS })).statusCode, 401, 'no token: 401 before the limit')
  t.equal((await app.inject({ url: '/svc/v2/events?bogus=1', headers: AUTH })).statusCode, 429, 'the limit before the parameter checks')
  t.equal((await app.inject({ url: EVENTS, headers: { authorization: `Bearer ${OTHER_TOKEN}` } })).statusCode, 200, 'another token has its own count')
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200, 'probes are not limited')
  const counted = await app.inject({ url: EVENTS, headers: { authorization: `Bearer ${OTHER_TOKEN}` } })
  t.equal(counted.headers['ratelimit-remaining'], '1', 'remaining on a counted answer')
})

t.test('RATE_LIMIT on the ingest: 401 and 403 first, then 429, then the body\'s type and size', async (t) => {
  const app = await build(t, { rateLimit: { max: 2, windowMs: 60_000, text: '2/minute' }, ingestMaxBytes: 64 })
  const post = async (headers: Record<string, string>, payload = '') => (await app.inject({ method: 'POST', url: '/ingest/events', headers, payload })).statusCode
  const plain = { ...INGEST_AUTH, 'content-type': 'text/plain' }
  t.equal(await post(plain), 415, 'within the limit: the type is judged')
  t.equal(await post({ ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, 'x'.repeat(65)), 413, 'and the size')
  t.equal(await post(plain), 429, 'past it: 429 before the type')
  t.equal(await post({ ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, 'x'.repeat(65)), 429, 'and before the size')
  t.equal(await post({ 'content-type': 'text/plain' }), 401, 'no token: 401 before the limit')
  t.equal(await post({ ...AUTH, 'content-type': 'text/plain' }), 403, 'a consumer token: 403 before the limit')
})

t.test('CORS_ORIGINS: headers for the listed origins, preflight without a token; none when unset', async (t) => {
  const app = await build(t, { corsOrigins: ['https://app.example.com'] })
  const preflight = await app.inject({ method: 'OPTIONS', url: '/svc/v2/events', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' } })
  t.equal(preflight.statusCode, 200, 'a preflight needs no token')
  t.equal(preflight.headers['content-length'], '0', 'an empty 200, with its length (Safari waits for a body without one; a 204 may not have one)')
  t.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com')
  t.match(String(preflight.headers['access-control-allow-headers']), /authorization/i)
  const real = await app.inject({ url: EVENTS, headers: { ...AUTH, origin: 'https://app.example.com' } })
  t.equal(real.statusCode, 200)
  t.equal(real.headers['access-control-allow-origin'], 'https://app.example.com')
  // A cache must keep apart the answers to other origins and to other codings, on every route.
  t.match(real.headers.vary, /(^|, *)origin(,|$)/i, 'events: Vary names Origin')
  t.match(real.headers.vary, /(^|, *)accept-encoding(,|$)/i, 'and Accept-Encoding')
  const specifications = await app.inject({ url: '/svc/v2/event_specifications', headers: { ...AUTH, origin: 'https://app.example.com' } })
  t.match(specifications.headers.vary, /(^|, *)origin(,|$)/i, 'specifications: Vary names Origin')
  const denied = await app.inject({ url: EVENTS, headers: { origin: 'https://app.example.com' } })
  t.equal(denied.statusCode, 401, 'the real request still needs its token')
  t.equal(denied.headers['access-control-allow-origin'], 'https://app.example.com', 'and its 401 is readable by the page')
  // Not a preflight (no Origin, no Access-Control-Request-Method): never a plain-text error.
  const bare = await app.inject({ method: 'OPTIONS', url: '/svc/v2/events' })
  t.equal(bare.statusCode, 200, 'an OPTIONS that is not a preflight is answered as one, without CORS grants')
  t.equal(bare.body, '')
  t.equal(bare.headers['access-control-allow-origin'], undefined)
  const stranger = await app.inject({ url: EVENTS, headers: { ...AUTH, origin: 'https://evil.example.com' } })
  t.equal(stranger.headers['access-control-allow-origin'], undefined, 'another origin gets no CORS header')

  const plain = await build(t)
  const none = await plain.inject({ url: EVENTS, headers: { ...AUTH, origin: 'https://app.example.com' } })
  t.equal(none.headers['access-control-allow-origin'], undefined, 'unset: no CORS headers')
  t.equal((await plain.inject({ method: 'OPTIONS', url: '/svc/v2/events', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } })).statusCode, 401, 'unset: an OPTIONS is an ordinary request (token first)')
})

t.test('SERVICE_SEGMENT: the interface under another first segment', async (t) => {
  const app = await build(t, { serviceSegment: 'fds' })
  t.equal((await app.inject({ url: '/fds/v2/events?start_date=2024-01-01T00:00:00Z', headers: AUTH })).statusCode, 200)
  t.equal((await app.inject({ url: '/fds/v2/event_specifications', headers: AUTH })).statusCode, 200)
  t.equal((await app.inject({ url: EVENTS, headers: AUTH })).statusCode, 404, 'not under svc any more')
  t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200, 'the probes stay where they are')
})

t.test('CORS headers reach the event stream too (it writes its own head)', async (t) => {
  const app = await build(t, { corsOrigins: ['https://app.example.com'] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { SseClient } = await import('./live/sse-client.js')
  const port = (app.server.address() as { port: number }).port
  const client = new SseClient(`http://127.0.0.1:${port}/svc/v2/events/stream`, { ...AUTH, origin: 'https://app.example.com' })
  t.teardown(() => client.close())
  await client.until((c) => c.status === 200)
  t.equal(client.headers['access-control-allow-origin'], 'https://app.example.com')
  t.equal(client.headers['content-type'], 'text/event-stream; charset=utf-8')
})
