import t from 'tap'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ANSWER_BUFFER_BYTES, giveBackLentBuffer, lendAnswerBuffer } from '../src/events/answer-buffers.js'
import { loadConfig } from '../src/config.js'
import { AUTH, build } from './helper.js'

t.test('a buffer given back is lent again; one given back twice, or never lent, is not', async (t) => {
  const first = lendAnswerBuffer()
  t.equal(first.length, ANSWER_BUFFER_BYTES)
  giveBackLentBuffer(first.subarray(0, 10))
  giveBackLentBuffer(first)
  giveBackLentBuffer(Buffer.alloc(ANSWER_BUFFER_BYTES))
  const again = lendAnswerBuffer()
  t.equal(again.buffer, first.buffer, 'the same memory')
  const other = lendAnswerBuffer()
  t.not(other.buffer, first.buffer, 'given back twice, lent once')
  giveBackLentBuffer(again)
  giveBackLentBuffer(other)
})

t.test('an answer stuck behind a client that does not read keeps its memory while others reuse theirs', async (t) => {
  // 1,000 events of one device, so that an answer (about 190 kB) is larger than what the
  // sockets between here and a client that does not read can hold: it waits in Node, unfinished.
  const dir = await mkdtemp(join(tmpdir(), 'answer-buffers-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const eventsFile = join(dir, 'events.ndjson')
  const start = Date.UTC(2025, 0, 1)
  await writeFile(eventsFile, Array.from({ length: 1000 }, (_, i) => JSON.stringify({
    message_id: `m-${String(i).padStart(5, '0')}`, message_code: 'EMPTY', message_category: 'alert', date_time: new Date(start + i * 60_000).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1'
  })).join('\n') + '\n')
  // Enough pipelined requests may wait on a connection to fill its socket's buffers.
  const app = await build(t, { eventsFile, limits: { ...loadConfig({}).limits, maxPipelinedRequests: 100 } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  // Distinct answers: windows ending at different events.
  const path = (i: number) => `/svc/v2/events?start_date=2025-01-01T00:00:00Z&end_date=${new Date(start + (300 + i * 7) * 60_000).toISOString()}`
  const expected = async (p: string) => (await app.inject({ url: p, headers: AUTH })).body
  // Clients that pipeline 60 requests each and read nothing for a while: the first answers fill
  // the sockets' buffers, a later one waits in Node.
  const perSocket = 60
  const slow = [0, 1, 2].map(() => connect(port, '127.0.0.1'))
  const slowPaths = slow.map((_, s) => Array.from({ length: perSocket }, (_, i) => path(s * perSocket + i)))
  for (const [s, socket] of slow.entries()) {
    socket.pause()
    socket.write(slowPaths[s]!.map((p, i) => `GET ${p} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n${i === perSocket - 1 ? 'Connection: close\r\n' : ''}\r\n`).join(''))
  }
  await new Promise((resolve) => setTimeout(resolve, 300))
  // Meanwhile, many other answers are written and their memory reused.
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => fetch(`http://127.0.0.1:${port}${path(100 + i)}`, { headers: AUTH }).then(async (response) => response.text())))
  }
  for (const [s, socket] of slow.entries()) {
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.resume()
    await once(socket, 'end')
    let rest = Buffer.concat(chunks)
    for (const [i, p] of slowPaths[s]!.entries()) {
      const headEnd = rest.indexOf('\r\n\r\n')
      const length = Number(/content-length: (\d+)/i.exec(rest.subarray(0, headEnd).toString())?.[1])
      const body = rest.subarray(headEnd + 4, headEnd + 4 + length).toString()
      rest = rest.subarray(headEnd + 4 + length)
      t.equal(body, await expected(p), `socket ${s}, answer ${i} arrives as it was written`)
    }
  }
})
