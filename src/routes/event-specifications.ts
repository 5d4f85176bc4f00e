import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { errorResponses } from '../../schemas/responses.js'
import { SpecificationsQuerystring, SpecificationsResponse } from '../../schemas/specifications.js'
import { sendEmpty, sendError, sendJson } from '../http/replies.js'
import { splitList } from '../http/list-parameter.js'
import { preferredCoding } from '../http/accept-encoding.js'
import { COMPRESS_FROM_BYTES } from '../http/compressed-stream.js'
import { compressedBody, etagOf } from '../specifications/specification-catalog.js'

/** If-None-Match holds the entity tag, or `*`. */
function matches (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim()
    return trimmed === '*' || trimmed === etag || trimmed === 'W/' + etag
  })
}

/** The endpoint's only answer with SPECIFICATIONS_FILE=none. */
function notImplemented (_request: FastifyRequest, reply: FastifyReply, _done: HookHandlerDoneFunction): void {
  sendError(reply, 'not_implemented')
}

const eventSpecificationsRoutes: FastifyPluginAsyncTypebox = async function (fastify) {
  fastify.get('/v2/event_specifications', {
    schema: {
      querystring: SpecificationsQuerystring,
      response: {
        200: SpecificationsResponse,
        204: Type.Null({ description: 'not implemented (SPECIFICATIONS_FILE=none); the code is in the X-Error-Message header' }),
        304: Type.Null({ description: 'the ETag given in If-None-Match still holds' }),
        ...errorResponses
      }
    },
    config: { queryRules: {} },
    // Not implemented: 204 once the token and the parameters' names pass (onRequest), whatever
    // their values, which the schema checks after this hook.
    ...(fastify.specificationCatalog === undefined ? { preValidation: notImplemented } : {})
  }, async function (request, reply) {
    const catalog = fastify.specificationCatalog
    if (catalog === undefined) return sendError(reply, 'not_implemented')
    const answer = catalog.answer(splitList(request.query.message_codes), splitList(request.query.languages))
    // Compressed once per answer and coding, at the best ratio (the work is done once), kept with it.
    const coding = answer.body.length >= COMPRESS_FROM_BYTES ? preferredCoding(request.headers['accept-encoding']) : undefined
    const etag = etagOf(answer, coding)
    // Specifications rarely change: clients keep them and ask again with the ETag (304).
    reply.vary('Accept-Encoding')
    reply.header('etag', etag).revalidate()
    if (matches(request.headers['if-none-match'], etag)) return sendEmpty(reply, 304)
    if (coding === undefined) return sendJson(reply, answer.body)
    return sendJson(reply.header('content-encoding', coding), compressedBody(answer, coding))
  })
}

export default eventSpecificationsRoutes
