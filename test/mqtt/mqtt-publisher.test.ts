import t, { type Test } from 'tap'
import type { Message } from '../../schemas/message.js'
import { MqttPublisher, type MqttPublisherOptions, type PublishableEvent } from '../../src/live/mqtt-publisher.js'
import { eventTopic } from '../../src/live/mqtt-topic.js'
import { collect, connectClient, mosquittoSkip, receivedIds, startMosquitto, waitUntil, type Broker } from './mosquitto.js'
import { freePort as closedPort } from '../free-port.js'

const skip = mosquittoSkip()
const PREFIX = 'svc/v2/events'

interface LogLine {
  level: 'info' | 'warn' | 'error'
  obj: Record<string, unknown>
  msg: string
}

function captureLog (): { lines: LogLine[], log: MqttPublisherOptions['log'] } {
  const lines: LogLine[] = []
  const line = (level: LogLine['level']) => (obj: object, msg: string) => { lines.push({ level, obj: obj as Record<string, unknown>, msg }) }
  return { lines, log: { info: line('info'), warn: line('warn'), error: line('error') } }
}

function event (id: string, overrides: Partial<Message> = {}): PublishableEvent {
  const message: Message = {
    message_id: id,
    message_code: 'DISP_EMPTY',
    message_category: 'alert',
    date_time: '2026-10-01T08:00:00.000Z',
    device_id: 'soap-00001',
    space_id: 'ams-hq/f01/kitchen-1',
    ...overrides
  }
  return { message, json: JSON.stringify(message) }
}

function events (prefix: string, count: number): PublishableEvent[] {
  return Array.from({ length: count }, (_v, i) => event(`${prefix}-${i}`))
}

function publisher (t: Test, url: string, options: Partial<MqttPublisherOptions> = {}): MqttPublisher {
  const created = new MqttPublisher({ url, topicPrefix: PREFIX, queueMax: 10_000, instanceId: 'test-a', log: captureLog().log, ...options })
  t.teardown(() => created.close())
  return created
}

/** A subscriber whose session (subscription and queued QoS 1 messages) survives its absence and broker restarts. */
async function persistentSubscriber (t: Test, broker: Broker, clientId: string) {
  const client = await connectClient(t, broker.url, { clientId, clean: false, properties: { sessionExpiryInterval: 3600 } })
  const received = collect(client)
  await client.subscribeAsync(`${PREFIX}/#`, { qos: 1 })
  const connacks: boolean[] = []
  client.on('connect', (packet) => { connacks.push(packet.sessionPresent) })
  return { client, received, connacks }
}

t.test('an event reaches a subscriber byte for byte, at its topic, QoS 1, with its origin', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const subscriber = await connectClient(t, broker.url, { clientId: 'bytes-sub' })
  const received = collect(subscriber)
  await subscriber.subscribeAsync(`${PREFIX}/#`, { qos: 1 })
  const { lines, log } = captureLog()
  const pub = publisher(t, broker.url, { log, instanceId: 'bytes-a' })

  const sent = [
    event('b-1', { space_id: 'Zürich/étage 2', device_id: 'distributeur-é' }),
    event('b-2', { message_category: 'notification', device_id: undefined }),
    { message: event('b-3').message, json: '{"message_id":"b-3","note":"any bytes the endpoint serves: \\u00e9 é 😀"}' }
  ]
  pub.publish(sent)
  await waitUntil(() => received.length >= sent.length, 5000, 'three messages')
  t.equal(received.length, 3)
  for (const [i, { message, json }] of sent.entries()) {
    const got = received.find(({ topic }) => topic === eventTopic(PREFIX, message))
    t.ok(got, `${message.message_id} at ${eventTopic(PREFIX, message)}`)
    if (got === undefined) continue
    t.ok(got.payload.equals(Buffer.from(json, 'utf8')), `payload ${i} byte for byte`)
    t.equal(got.packet.qos, 1, 'QoS 1')
    t.equal(got.packet.retain, false, 'not retained')
    t.equal(got.packet.properties?.userProperties?.origin, 'bytes-a', 'user property origin')
  }
  await waitUntil(() => pub.waiting === 0, 2000, 'acknowledged')
  t.equal(pub.dropped, 0)
  t.ok(pub.connected)
  t.same(lines.map((l) => l.msg), ['MQTT broker connected'], 'one info line')
})

t.test('broker restarted while publishing: every event arrives (at least once)', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const { received, connacks } = await persistentSubscriber(t, broker, 'restart-sub')
  const { lines, log } = captureLog()
  const pub = publisher(t, broker.url, { log, instanceId: 'restart-a' })
  await waitUntil(() => pub.connected, 5000, 'publisher connected')

  pub.publish(events('before', 50))
  await waitUntil(() => receivedIds(received).size === 50 && pub.waiting === 0, 5000, 'the first 50')

  // Stopped with publishes in flight: those not acknowledged must be published again.
  pub.publish(events('during', 1000))
  await waitUntil(() => received.length > 60, 5000, 'some of the next 1000')
  await broker.stop()
  await waitUntil(() => !pub.connected, 5000, 'publisher sees the broker gone')
  const unacknowledged = pub.waiting
  t.ok(unacknowledged > 0, `${unacknowledged} of the 1000 not acknowledged when the broker stopped`)

  pub.publish(events('down', 200))
  t.equal(pub.waiting, unacknowledged + 200, 'the 200 wait in the publisher')
  t.equal(pub.dropped, 0)

  await broker.start()
  await waitUntil(() => receivedIds(received).size === 1250, 15_000, 'all 1250 events at the subscriber')
  await waitUntil(() => pub.waiting === 0, 5000, 'publisher has nothing waiting')
  t.equal(receivedIds(received).size, 1250, `1250 distinct events (${received.length} deliveries, duplicates allowed)`)
  t.ok(connacks.includes(true), 'the subscriber found its session after the restart')
  t.ok(lines.some((l) => l.level === 'warn' && l.msg.startsWith('MQTT connection lost')), 'the loss is logged')
  t.ok(lines.some((l) => l.level === 'info' && l.msg === 'MQTT broker reconnected'), 'the recovery is logged')
  t.ok(lines.filter((l) => l.level === 'warn').length <= 2, 'the outage is logged once, not at every reconnection attempt')
})

t.test('queueMax: the oldest waiting events are dropped, the newest delivered', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const { received } = await persistentSubscriber(t, broker, 'bound-sub')
  const { lines, log } = captureLog()
  const pub = publisher(t, broker.url, { log, queueMax: 10, instanceId: 'bound-a' })
  await waitUntil(() => pub.connected, 5000, 'publisher connected')

  await broker.stop()
  await waitUntil(() => !pub.connected, 5000, 'publisher sees the broker gone')
  const sent = events('bound', 25)
  pub.publish(sent)
  t.equal(pub.dropped, 15)
  t.equal(pub.waiting, 10)
  const dropLines = lines.filter((l) => l.level === 'warn' && l.msg.startsWith('MQTT queue full'))
  t.equal(dropLines.length, 1, 'one warn line')
  t.match(dropLines[0]?.msg, /dropped the 15 oldest/)
  t.equal(dropLines[0]?.obj.dropped, 15)

  await broker.start()
  await waitUntil(() => receivedIds(received).size >= 10 && pub.waiting === 0, 10_000, 'the 10 newest')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same([...receivedIds(received)].sort(), sent.slice(15).map((e) => e.message.message_id).sort(), 'exactly the 10 newest')
  t.equal(pub.dropped, 15)
})

t.test('broker down from the start: nothing throws, drops are logged at most every 10 s, close does not hang', async (t) => {
  const port = await closedPort()
  const { lines, log } = captureLog()
  const pub = new MqttPublisher({ url: `mqtt://127.0.0.1:${port}`, topicPrefix: PREFIX, queueMax: 5, instanceId: 'down-a', log })
  pub.publish(events('x', 7))
  t.equal(pub.connected, false)
  t.equal(pub.waiting, 5)
  t.equal(pub.dropped, 2)
  await new Promise((resolve) => setTimeout(resolve, 2300)) // two or three reconnection attempts
  pub.publish(events('y', 3))
  t.equal(pub.dropped, 5)
  t.equal(pub.waiting, 5)
  const drops = () => lines.filter((l) => l.msg.startsWith('MQTT queue full'))
  t.equal(drops().length, 1, 'the second drop waits for the 10 s throttle')
  t.equal(lines.filter((l) => l.msg.startsWith('MQTT broker unreachable')).length, 1, 'unreachable logged once')

  const started = Date.now()
  await pub.close()
  t.ok(Date.now() - started < 1500, 'close returns at once when not connected')
  t.equal(drops().length, 2, 'close writes the pending drop line')
  t.equal(drops()[1]?.obj.dropped, 5, 'with the running count')
  t.ok(lines.some((l) => l.level === 'warn' && l.obj.lost === 5), 'the undelivered events are logged at close')
  pub.publish(events('z', 1))
  t.equal(pub.waiting, 5, 'publish after close is ignored')
  await pub.close()
})

t.test('subscribeForeign: each instance gets the events of the others, not its own, also after a broker restart', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const a = publisher(t, broker.url, { instanceId: 'inst-a' })
  const b = publisher(t, broker.url, { instanceId: 'inst-b' })
  const gotA: Array<[string, string]> = []
  const gotB: Array<[string, string]> = []
  await waitUntil(() => a.connected && b.connected, 5000, 'both connected')
  await a.subscribeForeign((json, topic) => gotA.push([json, topic]))
  await b.subscribeForeign((json, topic) => gotB.push([json, topic]))
  const idsOf = (got: Array<[string, string]>) => got.map(([json]) => (JSON.parse(json) as Message).message_id).sort()

  const a1 = event('a-1')
  a.publish([a1, event('a-2')])
  b.publish([event('b-1')])
  // Someone else's client claiming to be inst-a: inst-a ignores it by its origin, inst-b takes it.
  const other = await connectClient(t, broker.url, { clientId: 'impostor' })
  await other.publishAsync(`${PREFIX}/alert/X/s/d`, JSON.stringify({ message_id: 'fake-a' }), { qos: 1, properties: { userProperties: { origin: 'inst-a' } } })
  await other.publishAsync(`${PREFIX}/alert/X/s/d`, JSON.stringify({ message_id: 'no-origin' }), { qos: 1 })
  await other.publishAsync('elsewhere/alert', JSON.stringify({ message_id: 'outside' }), { qos: 1 })

  await waitUntil(() => gotA.length >= 2 && gotB.length >= 4, 5000, 'the foreign events')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(idsOf(gotA), ['b-1', 'no-origin'], 'inst-a: inst-b\'s events and one without origin, none of its own')
  t.same(idsOf(gotB), ['a-1', 'a-2', 'fake-a', 'no-origin'], 'inst-b: inst-a\'s events')
  const [json, topic] = gotB.find(([j]) => j === a1.json) ?? []
  t.equal(json, a1.json, 'the JSON as published')
  t.equal(topic, eventTopic(PREFIX, a1.message), 'and its topic')

  // Clean sessions: the broker forgets the subscriptions; MQTT.js makes them again after reconnecting.
  await broker.stop()
  await waitUntil(() => !a.connected && !b.connected, 5000, 'both see the broker gone')
  await broker.start()
  await waitUntil(() => a.connected && b.connected, 5000, 'both reconnected')
  await new Promise((resolve) => setTimeout(resolve, 300)) // the SUBSCRIBE follows the CONNACK
  a.publish([event('a-3')])
  b.publish([event('b-2')])
  await waitUntil(() => gotA.length >= 3 && gotB.length >= 5, 5000, 'the foreign events after the restart')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(idsOf(gotA), ['b-1', 'b-2', 'no-origin'])
  t.same(idsOf(gotB), ['a-1', 'a-2', 'a-3', 'fake-a', 'no-origin'])
})

t.test('started before the broker: events and the foreign subscription wait for it', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  await broker.stop()
  const { lines, log } = captureLog()
  const early = publisher(t, broker.url, { instanceId: 'early', log })
  const got: string[] = []
  const subscribed = early.subscribeForeign((json) => got.push((JSON.parse(json) as Message).message_id))
  await subscribed
  t.pass('subscribeForeign resolves at once while not connected')
  early.publish(events('early', 3))
  await new Promise((resolve) => setTimeout(resolve, 1200)) // a failed reconnection attempt or two
  t.equal(early.waiting, 3)

  await broker.start()
  const late = publisher(t, broker.url, { instanceId: 'late' })
  const lateGot: string[] = []
  await waitUntil(() => early.connected && late.connected, 5000, 'both connected')
  // The early events are published before the late one subscribes: its queue is flushed once connected, not at once.
  await waitUntil(() => early.waiting === 0, 5000, 'the early events published')
  await late.subscribeForeign((json) => lateGot.push((JSON.parse(json) as Message).message_id))
  await new Promise((resolve) => setTimeout(resolve, 200)) // the queued SUBSCRIBE of the early one
  late.publish([event('late-1')])
  early.publish([event('early-3')])
  await waitUntil(() => got.length >= 1 && lateGot.length >= 1, 5000, 'each sees the other')
  await waitUntil(() => early.waiting === 0, 5000, 'the early events delivered')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(got, ['late-1'], 'the subscription made while offline works')
  t.same(lateGot, ['early-3'], 'the events published before the late one subscribed are not replayed (clean sessions)')
  t.same(lines.map((l) => [l.level, l.msg.split(';')[0]]), [
    ['warn', 'MQTT broker unreachable or failing'],
    ['info', 'MQTT broker connected']
  ], 'one line when unreachable, one when connected')
})
