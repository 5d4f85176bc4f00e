import { once } from 'node:events'
import { createServer } from 'node:net'

/** A TCP port free on the loopback address at the time of asking (nothing listens on it then). */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}
