import t from 'tap'
import type { Message } from '../schemas/message.js'
import { MessageListWriter } from '../src/events/message-list-writer.js'
import { encodeMessage, encodeMessageList } from '../src/store/message-json.js'

const message = (i: number, id = `m-${i}`): Message => ({
  message_id: id, message_code: 'C', message_category: 'alert', date_time: '2026-01-01T00:00:00.000Z', device_id: 'd-✓-"q"', space_id: 's\\1'
})

t.test('the encoded message list holds each message\'s wire JSON, by offsets', async (t) => {
  const messages = Array.from({ length: 50 }, (_, i) => message(i, `kept-${i}-ünïcødé-🚻`))
  const { bytes, offsets } = encodeMessageList(messages)
  t.equal(offsets.length, messages.length + 1)
  messages.forEach((m, i) => {
    t.equal(bytes.subarray(offsets[i], offsets[i + 1]).toString('utf8'), JSON.stringify(m), `message ${i}`)
  })
  t.equal(encodeMessage({ message_id: 'x', message_code: 'y', message_category: 'notification', date_time: 'z', space_id: 's' }),
    '{"message_id":"x","message_code":"y","message_category":"notification","date_time":"z","space_id":"s"}', 'wire field order, no device_id when absent')
})

t.test('encoded bytes and serialised messages write the same JSON, growing past any capacity', async (t) => {
  const kept = Array.from({ length: 500 }, (_, i) => message(i, `kept-${i}-ünïcødé-🚻`))
  const plain = Array.from({ length: 500 }, (_, i) => message(i, `plain-${i}-ünïcødé-🚻`))
  const { bytes, offsets } = encodeMessageList(kept)
  const writer = new MessageListWriter()
  writer.text('[')
  const all: Message[] = []
  for (let i = 0; i < 500; i++) {
    if (i > 0) writer.comma()
    writer.encoded(bytes, offsets[i]!, offsets[i + 1]!)
    writer.comma()
    writer.message(plain[i]!)
    all.push(kept[i]!, plain[i]!)
  }
  writer.text(']')
  t.equal(writer.take().toString('utf8'), JSON.stringify(all))
  t.equal(writer.length, 0, 'take leaves the writer empty')
  writer.text('x')
  t.equal(writer.take().toString(), 'x', 'and usable again')
})
