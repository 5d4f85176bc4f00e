import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import { withHookLast } from '../src/http/route-hooks.js'

/**
 * HEAD answers carry a Content-Length only where the GET answer would carry that length (RFC
 * 9110, sections 8.6 and 15.4.5). Fastify answers HEAD with the GET route and a last hook of its
 * own that sets the length of what the GET answer would have sent, `0` where that is nothing: a
 * 204, which must have none, a 304, which may have only the 200's, and a stream, whose GET answer
 * has no length. This hook runs after Fastify's, on HEAD routes only.
 */
export default fp(async function headRequests (fastify) {
  fastify.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') return
    const isStream = route.config?.stream === true
    const withoutFalseLength: onSendHookHandler = function (_request: FastifyRequest, reply: FastifyReply, payload, done) {
      const status = reply.statusCode
      if ((isStream && status === 200) || status === 204 || status === 304) reply.removeHeader('content-length')
      done(null, payload)
    }
    route.onSend = withHookLast(route.onSend, withoutFalseLength)
  })
}, { name: 'head-requests', fastify: '5.x' })
