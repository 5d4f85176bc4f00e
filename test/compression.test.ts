import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { BLOCK_EVENTS, deflatedBlocks } from '../src/events/deflated-blocks.js'
import { AUTH, build, INGEST_AUTH, manyEvents } from './helper.js'

const EVENTS = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'

t.test('events: gzip or brotli as asked, streamed answers compressed as they stream; Vary; none when small or not asked', async (t) => {
  const app = await build(t, { eventsFile: manyEvents(t.testdir(), 5000) })
  const plain = await app.inject({ url: EVENTS, headers: AUTH })
  t.ok(plain.rawPayload.length > 256 * 1024, 'a streamed answer')
  t.equal(plain.headers['content-encoding'], undefined)
  t.match(plain.headers.vary, /accept-encoding/i)

  const gzip = await app.inject({ url: EVENTS, headers: { ...AUTH, 'accept-encoding': 'gzip' } })
  t.equal(gzip.headers['content-encoding'], 'gzip')
  t.match(gzip.headers.vary, /accept-encoding/i)
  t.equal(gunzipSync(gzip.rawPayload).toString(), plain.body, 'the same bytes once decompressed')
  t.ok(gzip.rawPayload.length < plain.rawPayload.length * 0.15, `at most 15% of the bytes (${gzip.rawPayload.length} of ${plain.rawPayload.length})`)

  const br = await app.inject({ url: EVENTS, headers: { ...AUTH, 'accept-encoding': 'gzip, br' } })
  t.equal(br.headers['content-encoding'], 'br', 'brotli preferred when both are accepted')
  t.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body)

  const small = await app.inject({ url: `${EVENTS}&message_ids=bulk-1`, headers: { ...AUTH, 'accept-encoding': 'gzip' } })
  t.equal(small.headers['content-encoding'], undefined, 'under 1 KiB: not compressed')
  t.match(small.headers.vary, /accept-encoding/i)
  const identity = await app.inject({ url: EVENTS, headers: { ...AUTH, 'accept-encoding': 'identity' } })
  t.equal(identity.headers['content-encoding'], undefined)
})

t.test('specifications: compressed once per answer and coding, each with its own ETag; 304 still works', async (t) => {
  const app = await build(t)
  const url = '/svc/v2/event_specifications?languages=fra,deu,nld,spa'
  const plain = await app.inject({ url, headers: AUTH })
  t.ok(plain.rawPayload.length >= 1024)
  const gzip = await app.inject({ url, headers: { ...AUTH, 'accept-encoding': 'gzip' } })
  t.equal(gzip.headers['content-encoding'], 'gzip')
  t.equal(gunzipSync(gzip.rawPayload).toString(), plain.body)
  t.match(gzip.headers.vary, /accept-encoding/i)
  t.not(gzip.headers.etag, plain.headers.etag, 'another representation, another ETag')
  const again = await app.inject({ url, headers: { ...AUTH, 'accept-encoding': 'gzip' } })
  t.equal(again.rawPayload.compare(gzip.rawPayload), 0, 'the same compressed bytes (kept)')
  const notModified = await app.inject({ url, headers: { ...AUTH, 'accept-encoding': 'gzip', 'if-none-match': gzip.headers.etag as string } })
  t.equal(notModified.statusCode, 304)
  const switched = await app.inject({ url, headers: { ...AUTH, 'if-none-match': gzip.headers.etag as string } })
  t.equal(switched.statusCode, 200, 'the gzip ETag does not validate the uncompressed answer')
  const br = await app.inject({ url, headers: { ...AUTH, 'accept-encoding': 'br;q=1, gzip;q=0.5' } })
  t.equal(br.headers['content-encoding'], 'br')
  t.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body)
  const refusedBr = await app.inject({ url, headers: { ...AUTH, 'accept-encoding': 'br;q=0, gzip' } })
  t.equal(refusedBr.headers['content-encoding'], 'gzip', 'q=0 refuses a coding')
})

/** Events of three devices in turn, a second apart, from 2025-01-01 (ids `${prefix}-${i}`). */
function interleavedEvents (count: number, prefix: string, fromMs = Date.UTC(2025, 0, 1)): string {
  const devices = [['soap-001', 'bldg-a/floor-1'], ['towel-002', 'bldg-a/floor-1'], ['counter\'003', 'bldg-a/floor-2']] as const
  return Array.from({ length: count }, (_, i) => JSON.stringify({
    message_id: `${prefix}-${i}`, message_code: i % 5 === 0 ? 'EMPTY' : 'LOW_LEVEL', message_category: i % 5 === 0 ? 'alert' : 'notification', date_time: new Date(fromMs + i * 1000).toISOString(), device_id: devices[i % 3]![0], space_id: devices[i % 3]![1]
  })).join('\n') + '\n'
}

t.test('gzip: blocks of the store\'s events are compressed once and kept; every answer decompresses to the plain one', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'events.ndjson')
  // Five blocks of the store's and some, so answers hold whole blocks and parts of others.
  const count = 5 * BLOCK_EVENTS + 1234
  writeFileSync(file, interleavedEvents(count, 'kept'))
  const app = await build(t, { eventsFile: file })
  const second = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString()
  const gzipped = async (query: string, headers: Record<string, string> = AUTH) => {
    const url = `/svc/v2/events?${query}`
    const plain = await app.inject({ url, headers })
    const gzip = await app.inject({ url, headers: { ...headers, 'accept-encoding': 'gzip' } })
    t.equal(plain.statusCode, 200, query)
    t.equal(gzip.headers['content-encoding'], 'gzip', `${query}: gzip`)
    t.equal(gzip.headers['content-length'], undefined, `${query}: streamed`)
    t.equal(gunzipSync(gzip.rawPayload).compare(plain.rawPayload), 0, `${query}: the plain answer's bytes once decompressed`)
    return { plain, gzip }
  }

  const madeBefore = deflatedBlocks.made
  // Two answers at once over blocks not made yet: each block made once, shared.
  const [everything] = await Promise.all([gzipped('start_date=2024-12-31T00:00:00Z'), gzipped('start_date=2024-12-31T00:00:00Z')])
  t.ok(everything.plain.rawPayload.length > 256 * 1024)
  // The first event is written with the head, so block 0 is compressed as it goes; 1 to 4 are kept.
  t.equal(deflatedBlocks.made - madeBefore, 4, 'the whole blocks the answer holds, compressed once')
  t.ok(everything.gzip.rawPayload.length < everything.plain.rawPayload.length * 0.2)
  const again = await gzipped('start_date=2024-12-31T00:00:00Z')
  t.equal(again.gzip.rawPayload.compare(everything.gzip.rawPayload), 0, 'the same bytes again')
  t.equal(deflatedBlocks.made - madeBefore, 4, 'nothing compressed again: kept')

  // Windows that begin and end inside blocks, or hold none whole.
  await gzipped(`start_date=${second(BLOCK_EVENTS + 17)}&end_date=${second(4 * BLOCK_EVENTS - 5)}`)
  await gzipped(`start_date=${second(2 * BLOCK_EVENTS)}&end_date=${second(3 * BLOCK_EVENTS)}`)
  await gzipped(`start_date=${second(2 * BLOCK_EVENTS - 1)}&end_date=${second(3 * BLOCK_EVENTS + 1)}`)
  await gzipped(`start_date=${second(BLOCK_EVENTS + 1)}&end_date=${second(2 * BLOCK_EVENTS + 10)}`)
  // Filters leave gaps: no block is whole, all of it compressed as it goes.
  await gzipped('start_date=2024-12-31T00:00:00Z&device_ids=soap-001,towel-002')
  await gzipped('start_date=2024-12-31T00:00:00Z&message_category=notification')
  // Unknown IDs: their errors follow the events.
  const unknown = await gzipped('start_date=2024-12-31T00:00:00Z&device_ids=soap-001,towel-002,counter\'003,nobody')
  t.match(unknown.plain.json().errors, [{ id: 'nobody' }])

  // Ingested events make segments of their own, after the loaded one.
  const ingest = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: interleavedEvents(BLOCK_EVENTS + 500, 'new', Date.UTC(2025, 0, 1) + count * 1000) })
  t.equal(ingest.json().written, BLOCK_EVENTS + 500)
  const madeBeforeIngested = deflatedBlocks.made
  await gzipped('start_date=2024-12-31T00:00:00Z')
  t.equal(deflatedBlocks.made - madeBeforeIngested, 1, 'the ingested segment\'s whole block')
  // The next ingest grows that segment in its room: its block is still the kept one.
  const more = await app.inject({ method: 'POST', url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/x-ndjson' }, payload: interleavedEvents(100, 'more', Date.UTC(2025, 0, 1) + (count + BLOCK_EVENTS + 500) * 1000) })
  t.equal(more.json().written, 100)
  await gzipped('start_date=2024-12-31T00:00:00Z')
  t.equal(deflatedBlocks.made - madeBeforeIngested, 1, 'not made again')
  await gzipped(`start_date=${second(count - 10)}`)
})
