import type { Message } from '../../schemas/message.js'
import type { JsonBytes } from '../data/json-bytes.js'
import type { LiveEvent } from './live-event.js'
import { newLogId, SerialQueue, WrittenEvent, type AcceptedEvent, type BrokerStatus, type LiveBus, type LiveListener } from './live-bus.js'
import type { MqttPublisher } from './mqtt-publisher.js'
import { SequenceHub } from './sequence-hub.js'

/** The bus of a provider that runs in one process. */
export class LocalBus implements LiveBus {
  readonly logId = newLogId()
  readonly #listeners: LiveListener[] = []
  readonly #hub: SequenceHub
  readonly #writes = new SerialQueue()

  constructor (mqtt: MqttPublisher | undefined) {
    this.#hub = new SequenceHub((firstSeq, events, origin) => {
      // This process's own events carry their seq themselves (no wrapper per ingested event).
      const live: LiveEvent[] = events.map((event, i) => {
        if (!(event instanceof WrittenEvent)) return new SequencedEvent(firstSeq + i, event)
        event.seq = firstSeq + i
        return event
      })
      const source = origin === 'another-provider' ? 'another-provider' : 'this-process'
      for (const listener of this.#listeners) listener(live, source)
    }, mqtt)
  }

  async listenToBroker (onBadPayload: (topic: string) => void): Promise<void> {
    await this.#hub.listenToBroker(onBadPayload)
  }

  publish (events: readonly AcceptedEvent[]): void {
    this.#hub.accepted(events, 'self')
  }

  listen (listener: LiveListener): void {
    this.#listeners.push(listener)
  }

  exclusive<T> (write: () => Promise<T>): Promise<T> {
    return this.#writes.run(write)
  }

  brokerStatus (): BrokerStatus | undefined {
    return this.#hub.brokerStatus()
  }

  async settled (): Promise<void> {}

  async close (): Promise<void> {
    await this.#hub.close()
  }
}

/** An accepted event with its seq; its message and JSON read from the accepted event when asked for (see WrittenEvent). */
class SequencedEvent implements LiveEvent {
  readonly seq: number
  readonly #accepted: AcceptedEvent

  constructor (seq: number, accepted: AcceptedEvent) {
    this.seq = seq
    this.#accepted = accepted
  }

  get message (): Message {
    return this.#accepted.message
  }

  get epochMs (): number | undefined {
    return this.#accepted.epochMs
  }

  get bytes (): JsonBytes | undefined {
    return this.#accepted.bytes
  }

  get json (): string {
    return this.#accepted.json
  }
}
