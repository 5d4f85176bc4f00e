import t from 'tap'
import type { Message } from '../schemas/message.js'
import { MessageListWriter, keepJsonBytes } from '../src/events/message-json.js'

const message = (i: number, id = `m-${i}`): Message => ({
  message_id: id, message_code: 'C', message_category: 'alert', date_time: '2026-01-01T00:00:00.000Z', device_id: 'd-✓-"q"', space_id: 's\\1'
})

t.test('kept bytes and serialised messages write the same JSON, growing past any capacity', async (t) => {
  const kept = Array.from({ length: 500 }, (_, i) => message(i, `kept-${i}-ünïcødé-🚻`))
  const plain = Array.from({ length: 500 }, (_, i) => message(i, `plain-${i}-ünïcødé-🚻`))
  keepJsonBytes(kept)
  const writer = new MessageListWriter()
  writer.text('[')
  const all = [...kept, ...plain].sort(() => 0)
  all.forEach((m, i) => {
    if (i > 0) writer.comma()
    writer.message(m)
  })
  writer.text(']')
  const bytes = writer.take()
  t.equal(bytes.toString('utf8'), JSON.stringify(all))
  t.same(Object.keys(kept[0]!), ['message_id', 'message_code', 'message_category', 'date_time', 'device_id', 'space_id'], 'the kept bytes are invisible to JSON and Object.keys')
  t.equal(writer.length, 0, 'take leaves the writer empty')
  writer.text('x')
  t.equal(writer.take().toString(), 'x', 'and usable again')
})
