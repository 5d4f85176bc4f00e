import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'

const Health = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  mqtt: Type.Optional(Type.Union([Type.Literal('connected'), Type.Literal('disconnected')], {
    description: 'the MQTT broker (with MQTT_URL): events accepted while it is disconnected wait for it; the provider stays ready'
  }))
}, { additionalProperties: false })

/**
 * Probes for orchestrators, served without a token: liveness says the process answers, readiness
 * says whether the store can serve events (503 while it cannot), and, with MQTT_URL, whether the
 * broker is connected (the provider serves and ingests without it). They say nothing more to
 * callers without a token; why the store is not ready goes to the log, once each time that changes.
 */
const healthRoutes: FastifyPluginAsyncTypebox = async function (fastify) {
  fastify.get('/health/live', {
    schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    config: { public: true }
  }, async () => ({ status: 'ok' as const }))

  let lastReason: string | undefined
  fastify.get('/health/ready', {
    schema: { response: { 200: Health, 503: Health } },
    config: { public: true }
  }, async (request, reply) => {
    const health = await fastify.events.health()
    const reason = health.ready ? undefined : health.reason ?? 'no reason given'
    if (reason !== lastReason) {
      if (reason === undefined) request.log.info({ store: fastify.events.kind }, 'the event store is ready again')
      else request.log.warn({ store: fastify.events.kind, reason }, 'the event store is not ready')
      lastReason = reason
    }
    const broker = fastify.live.brokerStatus()
    const status = health.ready ? 'ok' as const : 'unavailable' as const
    return reply.code(health.ready ? 200 : 503).send(broker === undefined ? { status } : { status, mqtt: broker.connected ? 'connected' as const : 'disconnected' as const })
  })
}

export default healthRoutes
