import t from 'tap'
import { once } from 'node:events'
import { createServer, get, type ServerResponse } from 'node:http'
import { Writable } from 'node:stream'
import { buildApp } from '../src/app.js'
import { AUTH, storeFromEnv, testConfig } from './helper.js'

// A stand-in InfluxDB 1.x that answers its ping, and starts a chunked answer of 3,000 events of
// soap-001 (past the size where the provider streams) to a query and then stops answering: the
// provider has sent its 200 and part of the body.
async function stallingInflux (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const open: ServerResponse[] = []
  const server = createServer((request, response) => {
    request.resume()
    if (request.url?.startsWith('/ping') === true) {
      response.writeHead(204).end()
      return
    }
    open.push(response)
    response.writeHead(200, { 'content-type': 'application/json' })
    for (let chunk = 0; chunk < 3; chunk++) {
      const values = Array.from({ length: 1000 }, (_, i) => {
        const n = chunk * 1000 + i
        return [Date.UTC(2024, 5, 1) + n, `m-${String(n).padStart(5, '0')}`, 'EMPTY', 'alert', 'soap-001', 'bldg-a/floor-1']
      })
      response.write(JSON.stringify({ results: [{ statement_id: 0, series: [{ name: 'event', columns: ['time', 'message_id', 'message_code', 'message_category', 'device_id', 'space_id'], values }], partial: true }] }) + '\n')
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const response of open) response.destroy()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

t.test('an answer cut by the store after it has begun is logged at error level, with what was sent and why', async (t) => {
  const url = await stallingInflux(t)
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()))
      callback()
    }
  })
  // LOG_LEVEL=error hides every per-request line; this one must still be there.
  const config = testConfig({ logLevel: 'error', store: storeFromEnv({ STORE: 'influxdb', INFLUX_URL: url, INFLUX_DATABASE: 'x', INFLUX_TIMEOUT_MS: '500' }) })
  const app = await buildApp(config, { logger: { level: 'error', stream } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const response = await new Promise<{ status: number, headers: Record<string, unknown>, body: string, complete: boolean }>((resolve) => {
    get({ port, host: '127.0.0.1', path: '/svc/v2/events?start_date=2024-01-01T00:00:00Z', headers: AUTH }, (answer) => {
      let body = ''
      answer.setEncoding('utf8')
      answer.on('data', (chunk: string) => { body += chunk })
      answer.on('error', () => {})
      answer.on('close', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body, complete: answer.complete }))
    })
  })
  t.equal(response.status, 200, 'the status was out before the store failed')
  t.equal(response.headers['transfer-encoding'], 'chunked')
  t.notOk(response.complete, 'the chunked body was not terminated')
  t.notOk(response.body.endsWith('],"errors":[]}'), 'the body stops without its end')
  const cut = lines.find((line) => line.msg === 'events answer cut: the store failed after the answer had begun')
  t.ok(cut, 'logged')
  t.equal(cut?.level, 50, 'at error level')
  t.type(cut?.reqId, 'string', 'with the request id')
  t.equal(cut?.eventsSent, response.body.split('"message_id"').length - 1, 'how many events had gone out')
  t.equal(cut?.bytesSent, Buffer.byteLength(response.body), 'and how many bytes')
  t.ok((cut?.bytesSent as number) > 256 * 1024, 'past the size where answers stream')
  t.match((cut?.err as { message?: string })?.message, /InfluxDB stopped answering for 500 ms/, 'and why')
})

t.test('a query InfluxDB refuses as malformed is the provider\'s defect: 500 internal_error, logged as an error', async (t) => {
  const server = createServer((request, response) => {
    request.resume()
    response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"error parsing query: found EOF, expected identifier"}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _encoding, callback) { lines.push(JSON.parse(chunk.toString())); callback() } })
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const app = await buildApp(testConfig({ store: storeFromEnv({ STORE: 'influxdb', INFLUX_URL: url, INFLUX_DATABASE: 'x' }) }), { logger: { level: 'error', stream } })
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/svc/v2/events?start_date=2024-01-01T00:00:00Z', headers: AUTH })
  t.equal(response.statusCode, 500)
  t.same(response.json(), { status: 500, message: 'internal_error' })
  const logged = lines.find((line) => (line.err as { type?: string } | undefined)?.type === 'StoreQueryError')
  t.equal(logged?.level, 50, 'logged at error level')
  t.match((logged?.err as { message?: string } | undefined)?.message, 'InfluxDB answered 400 to a query: error parsing query')
})

/** A provider on InfluxDB at `influxUrl` (a 500 ms timeout), listening; its port. */
async function listeningOn (t: { teardown (fn: () => unknown): void }, influxUrl: string): Promise<number> {
  const config = testConfig({ logLevel: 'silent', store: storeFromEnv({ STORE: 'influxdb', INFLUX_URL: influxUrl, INFLUX_DATABASE: 'x', INFLUX_TIMEOUT_MS: '500' }) })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as { port: number }).port
}

/** The status, head and whole body of a stream request, read until the provider closes it. */
async function streamAnswer (port: number, path: string): Promise<{ status: number, headers: Record<string, unknown>, body: string }> {
  return await new Promise((resolve) => {
    get({ port, host: '127.0.0.1', path, headers: { ...AUTH, accept: 'text/event-stream' } }, (answer) => {
      let body = ''
      answer.setEncoding('utf8')
      answer.on('data', (chunk: string) => { body += chunk })
      answer.on('error', () => {})
      answer.on('close', () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body }))
    })
  })
}

t.test('a start_date stream while the store cannot be reached: 503 in the error object, before the stream starts', async (t) => {
  // A port nothing listens on.
  const closed = createServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const { port: deadPort } = closed.address() as { port: number }
  await new Promise((resolve) => closed.close(resolve))
  const port = await listeningOn(t, `http://127.0.0.1:${deadPort}`)
  const answer = await streamAnswer(port, '/svc/v2/events/stream?start_date=2024-01-01T00:00:00Z')
  t.equal(answer.status, 503)
  t.match(answer.headers['content-type'], /^application\/json/)
  t.same(JSON.parse(answer.body), { status: 503, message: 'service_unavailable' })
  t.ok(answer.headers['retry-after'] !== undefined, 'with Retry-After')
  // A live stream reads no stored event: it opens whatever the store's state.
  const live = await new Promise<{ status: number, type: unknown }>((resolve) => {
    const request = get({ port, host: '127.0.0.1', path: '/svc/v2/events/stream', headers: { ...AUTH, accept: 'text/event-stream' } }, (response) => {
      resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'] })
      request.destroy()
    })
    request.on('error', () => {})
  })
  t.equal(live.status, 200, 'without start_date: the stream opens')
  t.match(live.type, /^text\/event-stream/)
})

t.test('a start_date replay the store cuts: the stream says from when to backfill (reset), then ends, so the client comes back', async (t) => {
  const port = await listeningOn(t, await stallingInflux(t))
  const answer = await streamAnswer(port, '/svc/v2/events/stream?start_date=2024-01-01T00:00:00Z&device_ids=soap-001')
  t.equal(answer.status, 200)
  const frames = answer.body.split('\n\n').filter((frame) => frame !== '' && !frame.startsWith(':'))
  const messages = frames.filter((frame) => frame.includes('event: message'))
  t.ok(messages.length > 0, `the events replayed before the store failed (${messages.length})`)
  const last = frames.at(-1)!
  t.match(last, /^event: reset\ndata: /, 'the last frame is a reset')
  const lastSent = JSON.parse(/data: (.*)$/.exec(messages.at(-1)!)![1]!).date_time as string
  t.same(JSON.parse(last.slice(last.indexOf('data: ') + 6)), { since: lastSent }, 'from the last event it got')
})
