import { readFile } from 'node:fs/promises'
import Fastify from 'fastify'
import { keepNextTickShape } from '../src/runtime/next-tick-shape.js'

/**
 * The framework ceiling, run as a child process: a bare Fastify server whose single route answers
 * every GET with the body it was last given, byte for byte, with its status, content type and
 * other headers (the provider's answer as captured). The parent sends
 * `{ file, status, contentType, headers }` over IPC and waits for `{ serving: true }` before
 * measuring; it learns the port from the first message, `{ port }`. It keeps a nextTick entry
 * alive as the provider does (src/runtime/next-tick-shape.ts): without it, its first full
 * collection (the large answers' buffers cause some) would slow every later request by a few
 * microseconds, and the ceiling would no longer be the best the framework does.
 */
interface Reply {
  body: Buffer
  status: number
  contentType: string
  /** The provider's other headers, replayed as they are. */
  headers: Record<string, string>
}

await keepNextTickShape()

let current: Reply = { body: Buffer.from('{}'), status: 200, contentType: 'application/json', headers: {} }

const fastify = Fastify({ logger: false })
fastify.get('/*', async (request, reply) => reply.code(current.status).headers(current.headers).header('content-type', current.contentType).send(current.body))

process.on('message', (message: { file: string, status: number, contentType: string, headers: Record<string, string> }) => {
  readFile(message.file).then((body) => {
    current = { body, status: message.status, contentType: message.contentType, headers: message.headers }
    process.send!({ serving: true })
  }, (error: Error) => process.send!({ error: error.message }))
})
process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))

await fastify.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.send!({ port: (fastify.server.address() as { port: number }).port })
