import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { AUTH, build } from './helper.js'

const EVENTS = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'

function manyEvents (dir: string, count: number): string {
  const file = join(dir, 'events.ndjson')
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({
    message_id: `bulk-${i}`, message_code: i % 2 === 0 ? 'EMPTY' : 'LOW_LEVEL', message_category: i % 2 === 0 ? 'alert' : 'notification', date_time: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1'
  })).join('\n') + '\n')
  return file
}

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
