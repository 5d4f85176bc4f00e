import { once } from 'node:events'
import { createServer, request, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

/**
 * What the proxy does with one write (`POST /write`): pass it on; pass it on but send its answer
 * 300 ms late; pass it on and let InfluxDB apply it, but never send its answer on (a stall past
 * the provider's timeout); or drop it, the connection cut before InfluxDB sees it.
 */
export type WriteFate = 'pass' | 'slow' | 'withhold' | 'drop'

export interface WriteProxy {
  url: string
  /** The fates of the next writes, in order; writes beyond them pass. */
  readonly plan: WriteFate[]
  /** Writes InfluxDB answered whose answers were withheld (applied, as far as InfluxDB goes). */
  withheld: number
  /** Writes that reached the proxy, whatever their fate. */
  writes: number
}

/**
 * A proxy in front of a real InfluxDB that can make a write fail the ways a network does, which
 * a real influxd cannot be made to do on cue. Everything but `/write` passes untouched. Closed
 * when the test ends.
 */
export async function influxWriteProxy (t: { teardown (fn: () => unknown): void }, target: string): Promise<WriteProxy> {
  const upstream = new URL(target)
  const proxy: WriteProxy = { url: '', plan: [], withheld: 0, writes: 0 }
  const sockets = new Set<Socket>()
  const forward = (incoming: IncomingMessage, onAnswer: (answer: IncomingMessage) => void) => {
    const outgoing = request({ hostname: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, onAnswer)
    outgoing.on('error', () => {})
    incoming.pipe(outgoing)
  }
  const server = createServer((incoming, outgoing) => {
    const isWrite = incoming.method === 'POST' && incoming.url?.startsWith('/write') === true
    if (isWrite) proxy.writes++
    const fate = isWrite ? proxy.plan.shift() ?? 'pass' : 'pass'
    if (fate === 'drop') {
      incoming.socket.destroy()
      return
    }
    forward(incoming, (answer) => {
      if (fate === 'withhold') {
        proxy.withheld++
        answer.resume()
        return
      }
      const passOn = () => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      }
      if (fate === 'slow') setTimeout(passOn, 300)
      else passOn()
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    server.close()
  })
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  return proxy
}
