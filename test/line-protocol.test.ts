import t from 'tap'
import { Point } from '@influxdata/influxdb-client'
import type { Message } from '../schemas/message.js'
import { nanosecondsOf, toLineProtocol } from '../src/store/influx/event-point.js'
import { idHashOf, toIndexLine } from '../src/store/influx/message-id-index.js'
import { encodeMessage } from '../src/store/message-json.js'
import { encodeTagValue } from '../src/store/influx/tag-value.js'
import { writerStampLine } from '../src/store/influx/writer-stamps.js'

// The reference: the lines as @influxdata/influxdb-client's Point writes them.
function pointEventLine (measurement: string, message: Message, epochMs: number, slot: number): string {
  const point = new Point(measurement)
  if (message.device_id !== undefined) point.tag('device_id', encodeTagValue(message.device_id))
  point.tag('space_id', encodeTagValue(message.space_id!)).tag('message_code', encodeTagValue(message.message_code))
    .tag('message_category', message.message_category).stringField('message_id', message.message_id)
    .timestamp((BigInt(epochMs) * 1_000_000n + BigInt(slot)).toString())
  return point.toLineProtocol()!
}

function pointIndexLine (measurement: string, message: Message, epochMs: number, slot: number): string {
  return new Point(measurement + '_by_id').tag('id_hash', idHashOf(message.message_id)).stringField('message', encodeMessage(message))
    .timestamp((BigInt(epochMs) * 1_000_000n + BigInt(slot)).toString()).toLineProtocol()!
}

const PIECES = ['a', 'Z', '0', ',', ' ', '=', '"', '\\', '\n', '\r', '\t', 'é', '😀', '\\ ', '\u0000', "'", '#', '/']
function hostile (random: () => number, min = 1): string {
  let text = ''
  const length = min + Math.floor(random() * 8)
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(random() * PIECES.length)]
  return text
}

t.test('event, index and stamp lines are exactly what Point writes, for hostile identifiers and times on either side of 1970', async (t) => {
  let seed = 12345
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 0x1_0000_0000)
  const times = [Date.UTC(1678, 0, 1), -1, 0, 1, Date.UTC(2026, 10, 24, 12, 0, 0, 7), Date.UTC(2261, 11, 31, 23, 59, 59, 999)]
  let compared = 0
  for (let i = 0; i < 2000; i++) {
    const message: Message = { message_id: hostile(random), message_code: hostile(random), message_category: random() < 0.5 ? 'alert' : 'notification', date_time: '2026-11-24T12:00:00.007Z', space_id: hostile(random) }
    if (random() < 0.7) message.device_id = hostile(random)
    const measurement = random() < 0.5 ? 'event' : hostile(random)
    const epochMs = times[i % times.length]!
    const slot = i % 7 === 0 ? 0 : Math.floor(random() * 1_000_000)
    t.equal(toLineProtocol(measurement, message, epochMs, slot), pointEventLine(measurement, message, epochMs, slot))
    t.equal(toIndexLine(measurement, message, epochMs, slot), pointIndexLine(measurement, message, epochMs, slot))
    compared++
  }
  t.equal(compared, 2000)
  t.equal(writerStampLine('m ,x', 'w=1', 7, Date.UTC(2026, 0, 1, 5, 30)),
    new Point('m ,x_writers').tag('writer', 'w=1').intField('n', 7).timestamp(nanosecondsOf(Date.UTC(2026, 0, 1, 5), 0)).toLineProtocol())
})

t.test('nanoseconds: milliseconds and six digits below them, exact beyond 2^53 and before 1970', async (t) => {
  t.equal(nanosecondsOf(0, 0), '0')
  t.equal(nanosecondsOf(0, 17), '17')
  t.equal(nanosecondsOf(1, 0), '1000000')
  t.equal(nanosecondsOf(1709251200005, 17), '1709251200005000017')
  t.equal(nanosecondsOf(-1, 5), '-999995')
  t.equal(nanosecondsOf(-1709251200005, 999999), '-1709251200004000001')
})
