import type { Message } from '../../../schemas/message.js'
import type { EntityRegistry } from '../../registry/entity-registry.js'
import { matchesFilters, type EventQuery } from '../event-store.js'
import { isEventMessage } from './event-point.js'

/** One event as a store's query yields it, in time order of milliseconds (order within one is free). */
export interface TimedMessage {
  message: Message
  epochMs: number
}

const BATCH_SIZE = 1000

/**
 * InfluxDB orders by timestamp, whose sub-millisecond slot follows a hash of message_id, not the
 * ID itself. This restores the interface's order (date_time, then message_id) by sorting each
 * millisecond's events, drops repeats of one message_id, and keeps only events of known entities
 * that match the query, a last check that holds whatever the dialect pushed down.
 */
export async function * orderedBatches (rows: AsyncIterable<TimedMessage[]>, query: EventQuery, registry: EntityRegistry): AsyncGenerator<Message[]> {
  let out: Message[] = []
  let group: Message[] = []
  let groupMs = Number.NaN
  const flushGroup = () => {
    if (group.length > 1) group.sort((a, b) => a.message_id < b.message_id ? -1 : a.message_id > b.message_id ? 1 : 0)
    let previous: string | undefined
    for (const message of group) {
      if (message.message_id !== previous) out.push(message)
      previous = message.message_id
    }
    group = []
  }
  for await (const batch of rows) {
    for (const { message, epochMs } of batch) {
      if (epochMs !== groupMs) {
        flushGroup()
        groupMs = epochMs
      }
      if (isEventMessage(message) && registry.knowsEntityOf(message) && matchesFilters(query, message)) group.push(message)
    }
    if (out.length >= BATCH_SIZE) {
      yield out
      out = []
    }
  }
  flushGroup()
  if (out.length > 0) yield out
}
