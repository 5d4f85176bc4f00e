import t from 'tap'
import { once } from 'node:events'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startBackground, summariseBackground } from '../bench/background-load.js'
import { readLargeAnswers } from '../bench/large-reader.js'

/** A server on a free loopback port, closed (with its keep-alive connections) in teardown. */
async function serve (t: { teardown (fn: () => unknown): void }, handler: RequestListener): Promise<string> {
  const server: Server = createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    server.closeAllConnections()
    server.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/large`
}

/** About 1 MB in 64 chunks, chunked like the provider's large answers. */
const chunkedAnswer: RequestListener = (request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' })
  const chunk = Buffer.alloc(16 * 1024, 0x20)
  for (let i = 0; i < 64; i++) response.write(chunk)
  response.end()
}

t.test('keeps the connections busy for the duration and counts every answer read to the end', async (t) => {
  const seen = new Set<string>()
  let authorization: string | undefined
  const url = await serve(t, (request, response) => {
    seen.add(`${request.socket.remotePort}`)
    authorization = request.headers.authorization
    chunkedAnswer(request, response)
  })
  let running = false
  const report = await readLargeAnswers({ url, headers: { authorization: 'Bearer x' }, connections: 2, durationSec: 0.5, timeoutSec: 5 }, () => { running = true })
  t.ok(running, 'says when its requests are out')
  t.equal(authorization, 'Bearer x', 'sends the headers given')
  t.ok(report.statuses['200']! > 2, `answers read: ${report.statuses['200']}`)
  t.equal(report.latenciesMs.length, report.statuses['200'], 'one latency per answer')
  t.ok(report.latenciesMs.every((ms) => ms > 0 && ms < 5000), 'latencies in milliseconds')
  t.equal(report.errors, 0)
  t.ok(report.durationSec >= 0.5 && report.durationSec < 10, `duration ${report.durationSec}`)
  t.equal(seen.size, 2, 'two keep-alive connections')

  const run = summariseBackground(report, 200)
  t.equal(run.requests, report.statuses['200'])
  t.equal(run.unexpectedStatuses, 0)
  t.ok(run.latencyMs.p50 <= run.latencyMs.p99 && run.latencyMs.p99 <= run.latencyMs.max, 'percentiles in order')
})

t.test('other statuses are counted as unexpected', async (t) => {
  const url = await serve(t, (request, response) => {
    response.writeHead(503, { 'content-type': 'application/json' })
    response.end('{"status":503}')
  })
  const run = summariseBackground(await readLargeAnswers({ url, headers: {}, connections: 1, durationSec: 0.2, timeoutSec: 5 }), 200)
  t.ok(run.requests > 0)
  t.equal(run.unexpectedStatuses, run.requests)
  t.same(Object.keys(run.statuses), ['503'])
})

t.test('an answer that does not come in time is a timeout, counted among the errors', async (t) => {
  const url = await serve(t, () => {})
  const report = await readLargeAnswers({ url, headers: {}, connections: 1, durationSec: 0.5, timeoutSec: 0.1 })
  t.ok(report.timeouts >= 2, `timeouts: ${report.timeouts}`)
  t.equal(report.errors, report.timeouts)
  t.same(report.statuses, {})
})

t.test('an answer still being read at the end is abandoned, not counted', async (t) => {
  const url = await serve(t, (request, response) => {
    response.writeHead(200)
    response.write('[')
  })
  const report = await readLargeAnswers({ url, headers: {}, connections: 2, durationSec: 0.3, timeoutSec: 5 })
  t.same(report.statuses, {})
  t.equal(report.errors, 0)
  t.equal(report.timeouts, 0)
})

t.test('as a process of its own: started, running, then its summary', async (t) => {
  const url = await serve(t, chunkedAnswer)
  const started = performance.now()
  const load = await startBackground({ url, headers: {} }, { connections: 2, durationSec: 1 }, 200)
  t.ok(performance.now() - started < 15_000, 'resolves once running')
  const run = await load.finished
  t.ok(run.requests > 2, `answers read: ${run.requests}`)
  t.equal(run.errors, 0)
  t.equal(run.unexpectedStatuses, 0)
  t.ok(run.durationSec >= 1 && run.durationSec < 10, `duration ${run.durationSec}`)
})
