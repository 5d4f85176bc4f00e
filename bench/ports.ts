import { once } from 'node:events'
import { createServer } from 'node:net'

/** Every server of the benchmark listens here, and all traffic goes here. */
export const LOOPBACK = '127.0.0.1'

/** A TCP port free on the loopback address at the time of asking. */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, LOOPBACK)
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}
