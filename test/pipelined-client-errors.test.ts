import t from 'tap'
import { once } from 'node:events'
import { connect } from 'node:net'
import { AUTH, build } from './helper.js'

// Raw-socket clients that pipeline, against answers held to the end of their batch
// (plugins/batched-writes.ts).

const EVENTS = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'
const GET = `GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nauthorization: ${AUTH.authorization}\r\n\r\n`

async function listening (t: Parameters<typeof build>[0]): Promise<number> {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as { port: number }).port
}

/** Writes `data` in one go (then half-closes if asked) and reads until the server closes. */
async function rawExchange (port: number, data: string, halfClose = false): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.setEncoding('utf8')
  const done = new Promise<void>((resolve) => {
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })
  if (halfClose) socket.end(data)
  else socket.write(data)
  const timer = setTimeout(() => socket.destroy(), 3000)
  await done
  clearTimeout(timer)
  return received
}

const statuses = (raw: string) => [...raw.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))

t.test('a request sent with a half-close (FIN): answered, then the connection ends', async (t) => {
  // Its answer is held a turn or more (plugins/batched-writes.ts), in which Node reads the FIN:
  // by Node's default it would end the connection at once and the answer would be lost.
  const port = await listening(t)
  const raw = await rawExchange(port, GET, true)
  t.same(statuses(raw), [200], 'answered before the connection ends')
})

t.test('two pipelined requests sent with a half-close (FIN) at once: both answered', async (t) => {
  // The second's answer comes from a later turn (when the first's has finished), and Node reads
  // the FIN before either is written: by Node's default it would end the connection at once.
  const port = await listening(t)
  const raw = await rawExchange(port, GET + GET, true)
  t.same(statuses(raw), [200, 200], 'both pipelined requests are answered before the connection ends')
})

t.test('a valid request pipelined before a malformed one: its own answer comes first', async (t) => {
  const port = await listening(t)
  const raw = await rawExchange(port, GET + 'BROKEN\r\n\r\n')
  t.same(statuses(raw), [200, 400], 'the first (valid) request gets its 200, then the 400 for the malformed one')
})

t.test('a valid request pipelined before one with oversized headers: its own answer comes first', async (t) => {
  const port = await listening(t)
  const big = `GET ${EVENTS} HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`
  const raw = await rawExchange(port, GET + big)
  t.same(statuses(raw), [200, 431])
})

t.test('valid requests pipelined before a request cut short by a half-close: each answered, then the 400', async (t) => {
  // The first's answer is held for its batch; the pipelined ones wait for it. Read in the next
  // turn, the FIN makes the cut-short request a 400 that closes the connection: the answers
  // owed before it must not be lost.
  const port = await listening(t)
  for (let i = 0; i < 5; i++) {
    const raw = await rawExchange(port, GET + GET + GET + 'GET / HTTP/1.1\r\nhost', true)
    t.same(statuses(raw), [200, 200, 200, 400], `round ${i + 1}`)
  }
})
