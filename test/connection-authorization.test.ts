import t from 'tap'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sameText } from '../src/auth/connection-authorization.js'
import { tokenDigest } from '../src/http/bearer-token.js'
import { build, TOKEN } from './helper.js'

/**
 * A connection's last Authorization is remembered (src/auth/connection-authorization.ts): these
 * requests go over one kept-alive connection, as a client's do, so each one after the first
 * could be answered from what was remembered.
 */
const START = 'start_date=2024-01-01T00:00:00Z'

/** Requests written one after another on one connection; each status as it comes. */
function connection (port: number) {
  const socket: Socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => { received += chunk })
  return {
    async status (headers: string[]): Promise<number> {
      received = ''
      socket.write([`GET /svc/v2/events?${START} HTTP/1.1`, 'Host: provider', ...headers, '', ''].join('\r\n'))
      // A whole answer: its headers, and a body as long as Content-Length says.
      while (true) {
        const end = received.indexOf('\r\n\r\n')
        const length = /content-length: (\d+)/i.exec(received)?.[1]
        if (end !== -1 && length !== undefined && received.length >= end + 4 + Number(length)) break
        await once(socket, 'data')
      }
      return Number(received.slice(9, 12))
    },
    close: () => socket.destroy()
  }
}

t.test('over one connection, each request is let in or refused as its own header says', async (t) => {
  const dir = t.testdir()
  const named = 'named-token-1'
  const file = join(dir, 'tokens.json')
  writeFileSync(file, JSON.stringify({ tokens: [{ name: 'named', sha256: tokenDigest(named) }] }))
  const app = await build(t, { tokensFile: file })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const client = connection((app.server.address() as { port: number }).port)
  t.teardown(client.close)
  const auth = (token: string) => `Authorization: Bearer ${token}`
  t.equal(await client.status([auth(TOKEN)]), 200)
  t.equal(await client.status([auth(TOKEN)]), 200, 'the same token again')
  t.equal(await client.status([auth(TOKEN + 'x')]), 401, 'another, unknown token')
  t.equal(await client.status([auth(TOKEN + 'x')]), 401, 'the unknown one again')
  t.equal(await client.status([]), 401, 'no token')
  t.equal(await client.status([auth(TOKEN), auth(TOKEN)]), 401, 'the remembered header twice: ambiguous, refused')
  t.equal(await client.status([auth(named)]), 200, 'a token of TOKENS_FILE')
  t.equal(await client.status([auth(named)]), 200)

  // Revoked in the file: refused on the same connection once the file is reloaded.
  writeFileSync(file, JSON.stringify({ tokens: [] }))
  const deadline = Date.now() + 5000
  let status = 200
  while (status === 200 && Date.now() < deadline) {
    status = await client.status([auth(named)])
    if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(status, 401, 'a revoked token is refused on the connection that used it')
  t.equal(await client.status([auth(TOKEN)]), 200, 'API_TOKENS still work')
})

t.test('sameText: equal texts only, whatever their lengths', async (t) => {
  t.ok(sameText('Bearer abc', 'Bearer abc'))
  t.notOk(sameText('Bearer abc', 'Bearer abd'))
  t.notOk(sameText('Bearer abc', 'Bearer ab'))
  t.notOk(sameText('', 'x'))
  t.ok(sameText('', ''))
})
