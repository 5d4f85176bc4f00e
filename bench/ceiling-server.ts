import { readFile } from 'node:fs/promises'
import Fastify from 'fastify'
import { keepNextTickShape } from '../src/runtime/next-tick-shape.js'

/**
 * The framework ceiling, run as a child process: a bare Fastify server whose single route answers
 * every GET with the body it was last given, byte for byte, with its status, content type and
 * other headers (the provider's answer as captured). The parent sends
 * `{ file, status, contentType, headers }` over IPC and waits for `{ serving: true }` before
 * measuring; it learns the port from the first message, `{ port }`. A message with a `url` as well
 * gives the answer to that one URL (path and query) only, beside the main one, until the next main
 * answer: the large answers' check runs small requests beside large ones on the ceiling too. It keeps a nextTick entry
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
/** The answers of single URLs, beside the main one (empty but in the large answers' check). */
const byUrl = new Map<string, Reply>()

const fastify = Fastify({ logger: false })
fastify.get('/*', async (request, reply) => {
  // One branch when no URL has its own answer: the ceiling's own speed stays what it was.
  const answer = byUrl.size === 0 ? current : byUrl.get(request.url) ?? current
  return reply.code(answer.status).headers(answer.headers).header('content-type', answer.contentType).send(answer.body)
})

process.on('message', (message: { file: string, status: number, contentType: string, headers: Record<string, string>, url?: string }) => {
  readFile(message.file).then((body) => {
    const answer = { body, status: message.status, contentType: message.contentType, headers: message.headers }
    if (message.url === undefined) {
      current = answer
      byUrl.clear()
    } else {
      byUrl.set(message.url, answer)
    }
    process.send!({ serving: true })
  }, (error: Error) => process.send!({ error: error.message }))
})
process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))

await fastify.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.send!({ port: (fastify.server.address() as { port: number }).port })
