import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../schemas/responses.js'
import { SpecificationsQuerystring, SpecificationsResponse } from '../../schemas/specifications.js'
import { sendEmpty, sendError, sendJson } from '../http/replies.js'
import { splitList } from '../http/list-parameter.js'

/** If-None-Match holds the entity tag, or `*`. */
function matches (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim()
    return trimmed === '*' || trimmed === etag || trimmed === 'W/' + etag
  })
}

const eventSpecificationsRoutes: FastifyPluginAsyncTypebox = async function (fastify) {
  fastify.get('/svc/v2/event_specifications', {
    schema: {
      querystring: SpecificationsQuerystring,
      response: {
        200: SpecificationsResponse,
        204: Type.Null({ description: 'not implemented (SPECIFICATIONS_FILE=none); the code is in the X-Error-Message header' }),
        304: Type.Null({ description: 'the ETag given in If-None-Match still holds' }),
        ...errorResponses
      }
    },
    config: { queryRules: {} }
  }, async function (request, reply) {
    const catalog = fastify.specificationCatalog
    if (catalog === undefined) return sendError(reply, 'not_implemented')
    const answer = catalog.answer(splitList(request.query.message_codes), splitList(request.query.languages))
    // Specifications rarely change: clients keep them and ask again with the ETag (304).
    reply.header('etag', answer.etag).revalidate()
    if (matches(request.headers['if-none-match'], answer.etag)) return sendEmpty(reply, 304)
    return sendJson(reply, answer.body)
  })
}

export default eventSpecificationsRoutes
