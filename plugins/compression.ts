import fp from 'fastify-plugin'
import compress from '@fastify/compress'

/**
 * Answers compressed as Accept-Encoding asks (`@fastify/compress`): brotli (quality 4) or gzip,
 * none below 1 KiB or when not asked. A streamed events answer is compressed as it streams,
 * through a zlib stream, never held whole. Specifications are compressed once per answer and
 * cached beside it (src/routes/event-specifications.ts), so the plugin passes them by. Event
 * streams (SSE) write to their socket themselves and are never compressed.
 */
export default fp(async function compression (fastify) {
  await fastify.register(compress, {
    global: true,
    encodings: ['br', 'gzip'],
    threshold: 1024
  })
}, { name: 'compression', fastify: '5.x' })
