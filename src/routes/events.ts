import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorObject } from '../../schemas/error.js'
import { EventsQuerystring, EventsResponse, exclusiveEventFilters } from '../../schemas/events.js'
import { errorResponses } from '../../schemas/responses.js'
import { buildEventQuery } from '../events/build-event-query.js'
import { renderEventsBody } from '../events/render-events-body.js'
import { sendJson } from '../http/replies.js'

const noEvents = (async function * () {})()

const eventsRoutes: FastifyPluginAsyncTypebox = async function (fastify) {
  fastify.get('/svc/v2/events', {
    schema: {
      querystring: EventsQuerystring,
      response: { 200: EventsResponse, ...errorResponses, 403: ErrorObject, 503: ErrorObject }
    },
    config: { queryRules: { exclusive: exclusiveEventFilters, dateRange: { start: 'start_date', end: 'end_date' } } }
  }, async function (request, reply) {
    const { query, errors } = buildEventQuery(request.query, request.dateRange, fastify.entityRegistry)
    const body = await renderEventsBody(query === undefined ? noEvents : fastify.eventStore.queryEvents(query), errors)
    return sendJson(reply, body)
  })
}

export default eventsRoutes
