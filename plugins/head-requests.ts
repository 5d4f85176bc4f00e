import { Readable } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import { withHookLast } from '../src/http/route-hooks.js'

/**
 * HEAD answers carry a Content-Length only where the GET answer would carry that length (RFC
 * 9110, sections 8.6 and 15.4.5). Fastify answers HEAD with the GET route and a last hook of its
 * own that sets the length of what the GET answer would have sent, `0` where that is nothing: a
 * 204, which must have none, a 304, which may have only the 200's, and a stream, whose GET answer
 * has no length. This hook runs after Fastify's, on HEAD routes only; another runs first, so that
 * a streamed body is ended unread rather than drained.
 */
const unreadBody: onSendHookHandler = function (_request: FastifyRequest, _reply: FastifyReply, payload, done) {
  if (payload instanceof Readable) payload.destroy()
  done(null, payload)
}

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
    // First, before Fastify's own (which drains a streamed body): a HEAD answer's streamed body is
    // ended unread, so that nothing is made of it. Drained, a year's events answer was rendered
    // and compressed for no one after the answer had gone (1 s of CPU, 3.6 s with brotli), with
    // nothing to bound it: thirty HEAD requests on one connection cost 13 s of CPU.
    route.onSend = [unreadBody, ...route.onSend]
  })
}, { name: 'head-requests', fastify: '5.x' })
