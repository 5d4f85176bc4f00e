import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  store: Type.Object({
    kind: Type.String(),
    ready: Type.Boolean(),
    reason: Type.Optional(Type.String())
  })
})

/**
 * Probes for orchestrators, served without a token: liveness says the process answers, readiness
 * says whether the store can serve events (503 while it cannot).
 */
const healthRoutes: FastifyPluginAsyncTypebox = async function (fastify) {
  fastify.get('/health/live', {
    schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    config: { public: true }
  }, async () => ({ status: 'ok' as const }))

  fastify.get('/health/ready', {
    schema: { response: { 200: Health, 503: Health } },
    config: { public: true }
  }, async (request, reply) => {
    const events = fastify.events
    const health = await events.health()
    const body = { status: health.ready ? 'ok' as const : 'unavailable' as const, store: { kind: events.kind, ...health } }
    return reply.code(health.ready ? 200 : 503).send(body)
  })
}

export default healthRoutes
