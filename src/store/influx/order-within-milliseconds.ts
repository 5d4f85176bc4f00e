import type { Message } from '../../../schemas/message.js'
import { compareMessageIds } from '../event-order.js'
import { EVENT_BATCH_SIZE, type EventBatch } from '../event-store.js'
import { isEventMessage } from './event-point.js'
import type { TimedMessage } from './influx-backend.js'

/**
 * InfluxDB orders by timestamp, whose sub-millisecond slot follows a hash of message_id, not the
 * ID itself. This puts each millisecond's events in message_id order, the order every answer
 * keeps (the shared contract above the store checks it), and leaves out points that are not
 * events this provider wrote (see messageOf).
 */
export async function * orderWithinMilliseconds (rows: AsyncIterable<TimedMessage[]>): AsyncGenerator<EventBatch> {
  let out: Message[] = []
  let group: Message[] = []
  let groupMs = Number.NaN
  const flushGroup = () => {
    if (group.length > 1) group.sort((a, b) => compareMessageIds(a.message_id, b.message_id))
    for (const message of group) out.push(message)
    group = []
  }
  for await (const batch of rows) {
    for (const { message, epochMs } of batch) {
      if (epochMs !== groupMs) {
        flushGroup()
        groupMs = epochMs
      }
      if (isEventMessage(message)) group.push(message)
    }
    if (out.length >= EVENT_BATCH_SIZE) {
      yield { messages: out }
      out = []
    }
  }
  flushGroup()
  if (out.length > 0) yield { messages: out }
}
