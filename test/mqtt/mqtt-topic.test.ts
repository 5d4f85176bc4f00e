import t from 'tap'
import type { Message } from '../../schemas/message.js'
import { MqttPublisher } from '../../src/live/mqtt-publisher.js'
import { decodeTopicLevel, DEFAULT_MQTT_TOPIC_PREFIX, encodeTopicLevel, eventTopic } from '../../src/live/mqtt-topic.js'
import { collect, connectClient, mosquittoSkip, receivedIds, startMosquitto, waitUntil } from './mosquitto.js'

const skip = mosquittoSkip()
const P = DEFAULT_MQTT_TOPIC_PREFIX

function message (overrides: Partial<Message> = {}): Message {
  return {
    message_id: 'm-1',
    message_code: 'DISP_EMPTY',
    message_category: 'alert',
    date_time: '2026-10-01T00:00:00.000Z',
    device_id: 'soap-00001',
    space_id: 'ams-hq',
    ...overrides
  }
}

const silent = { info () {}, warn () {}, error () {} }

t.test('the default prefix', async (t) => {
  t.equal(DEFAULT_MQTT_TOPIC_PREFIX, 'svc/v2/events')
})

t.test('a device event: prefix, category, code, space, device', async (t) => {
  t.equal(eventTopic(P, message()), 'svc/v2/events/alert/DISP_EMPTY/ams-hq/soap-00001')
  t.equal(eventTopic('site/7', message({ message_category: 'notification' })), 'site/7/notification/DISP_EMPTY/ams-hq/soap-00001')
})

t.test('a space event ends with an empty level; a missing space is an empty level too', async (t) => {
  const { device_id: _device, ...spaceEvent } = message()
  t.equal(eventTopic(P, spaceEvent), 'svc/v2/events/alert/DISP_EMPTY/ams-hq/')
  t.equal(eventTopic(P, spaceEvent).split('/').length, 7, 'same depth as a device event')
  const { space_id: _space, ...noSpace } = message()
  t.equal(eventTopic(P, noSpace), 'svc/v2/events/alert/DISP_EMPTY//soap-00001')
})

t.test('hostile IDs: one ID is one level, no wildcard, no control character', async (t) => {
  const cases: Array<[string, string]> = [
    ['a/b', 'a%2Fb'],
    ['+', '%2B'],
    ['#', '%23'],
    ['%', '%25'],
    ['%2F', '%252F'],
    ['x\u0000y', 'x%00y'],
    ['tab\there', 'tab%09here'],
    ['del\u007f', 'del%7F'],
    ['c1\u0085', 'c1%C2%85'],
    ['c1\u009f', 'c1%C2%9F'],
    ['é', 'é'],
    ['Zürich 3/Flur ∆', 'Zürich 3%2FFlur ∆'],
    ['😀', '😀'],
    ['\u00a0nbsp', '\u00a0nbsp'],
    // What mosquitto refuses as malformed UTF-8 (it would drop the connection at each attempt).
    ['\uffff', '%EF%BF%BF'],
    ['\ufdd0', '%EF%B7%90'],
    ['\u{10fffe}', '%F4%8F%BF%BE'],
    ['lone\ud800', 'lone%ED%A0%80'],
    ['lone\udfff', 'lone%ED%BF%BF']
  ]
  for (const [id, level] of cases) {
    t.equal(encodeTopicLevel(id), level, JSON.stringify(id))
    t.equal(decodeTopicLevel(level), id, `round trip of ${JSON.stringify(id)}`)
    const topic = eventTopic(P, message({ message_code: id, space_id: id, device_id: id }))
    const levels = topic.split('/')
    t.equal(levels.length, 7, `${JSON.stringify(id)} takes one level each`)
    t.same(levels.slice(5).map(decodeTopicLevel), [id, id], 'space and device decode back')
    t.equal(decodeTopicLevel(levels[4]!), id, 'code decodes back')
    t.notMatch(levels.slice(4).join(''), /[+#\u0000-\u001f\u007f-\u009f]/, 'no wildcard or control character') // eslint-disable-line no-control-regex
  }
})

t.test('round trip of every control character, and of arbitrary text', async (t) => {
  let all = ''
  for (let code = 0; code <= 0xa0; code++) all += String.fromCharCode(code)
  const encoded = encodeTopicLevel(all)
  t.notMatch(encoded, /[/+#\u0000-\u001f\u007f-\u009f]/) // eslint-disable-line no-control-regex
  t.equal(decodeTopicLevel(encoded), all)
  t.match(encoded, /^%00%01%02/, 'upper case hex, UTF-8 bytes')
  t.match(encoded, /%7F%C2%80/)
  let seed = 11
  for (let i = 0; i < 2000; i++) {
    let id = ''
    const length = 1 + (i % 12)
    for (let k = 0; k < length; k++) {
      seed = (seed * 48271) % 2147483647
      id += String.fromCharCode(seed % 3 === 0 ? seed % 0x100 : seed % 0x10000)
    }
    const level = encodeTopicLevel(id)
    if (decodeTopicLevel(level) !== id || /[/+#]/.test(level)) {
      t.fail(`round trip of ${JSON.stringify(id)} gave ${JSON.stringify(level)}`)
      return
    }
  }
  t.pass('2000 random IDs of any UTF-16 code units round trip')
})

t.test('decodeTopicLevel leaves what is not a %XX escape as is', async (t) => {
  t.equal(decodeTopicLevel('plain'), 'plain')
  t.equal(decodeTopicLevel('100%'), '100%')
  t.equal(decodeTopicLevel('%zz'), '%zz')
  t.equal(decodeTopicLevel('%2f'), '/', 'lower case hex too')
  t.equal(decodeTopicLevel('%FF'), '\ufffd', 'a byte that is not UTF-8 gives U+FFFD')
})

t.test('real broker: a category filter selects, hostile IDs travel intact', { skip }, async (t) => {
  const broker = await startMosquitto(t)
  const alerts = await connectClient(t, broker.url, { clientId: 'alerts-only' })
  const received = collect(alerts)
  await alerts.subscribeAsync(`${P}/alert/#`, { qos: 1 })

  const publisher = new MqttPublisher({ url: broker.url, topicPrefix: P, queueMax: 100, instanceId: 'topic-test', log: silent })
  t.teardown(() => publisher.close())
  const hostile = ['a/b', '+', '#', '%', 'x\u0000y', 'é', '\uffff']
  const events = [
    ...hostile.map((id, i) => message({ message_id: `alert-${i}`, message_code: id, space_id: id, device_id: id })),
    message({ message_id: 'note-1', message_category: 'notification' }),
    message({ message_id: 'note-2', message_category: 'notification', device_id: '#' }),
    message({ message_id: 'space-alert', device_id: undefined })
  ]
  publisher.publish(events.map((m) => ({ message: m, json: JSON.stringify(m) })))

  await waitUntil(() => receivedIds(received).size >= hostile.length + 1, 5000, 'the alerts')
  await waitUntil(() => publisher.waiting === 0, 5000, 'every event acknowledged')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same([...receivedIds(received)].sort(), [...hostile.map((_id, i) => `alert-${i}`), 'space-alert'].sort(), 'alerts only')
  t.ok(publisher.connected, 'no ID made the broker drop the connection')
  for (const { topic, payload } of received) {
    const sent = JSON.parse(payload.toString('utf8')) as Message
    t.equal(topic, eventTopic(P, sent), `${sent.message_id} at its topic`)
    const levels = topic.split('/')
    t.equal(decodeTopicLevel(levels[4]!), sent.message_code)
    t.equal(decodeTopicLevel(levels[5]!), sent.space_id ?? '')
    t.equal(decodeTopicLevel(levels[6]!), sent.device_id ?? '')
  }
  t.ok(received.some(({ topic }) => topic.endsWith('/')), 'the space event topic ends with an empty level')
})
