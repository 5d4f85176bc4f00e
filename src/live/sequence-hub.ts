import { parseEventLine } from '../data/event-lines.js'
import { jsonTextOf } from '../data/json-bytes.js'
import type { AcceptedEvent, BrokerStatus } from './live-bus.js'
import type { MqttPublisher } from './mqtt-publisher.js'

/** Who accepted a batch: a process of this provider (its key), or another instance (heard on MQTT). */
export type Origin = { process: string } | 'another-provider'

export type Deliver = (firstSeq: number, events: readonly AcceptedEvent[], origin: Origin) => void

/**
 * Gives accepted events their place in the order of acceptance, publishes this provider's own
 * to MQTT (after they are durable: they reach the hub only then), and delivers every event,
 * those heard from other instances on the broker too, to the processes that serve streams.
 * Lives in the single process, or in a cluster's primary.
 */
export class SequenceHub {
  readonly #deliver: Deliver
  readonly #mqtt: MqttPublisher | undefined
  #nextSeq = 1

  constructor (deliver: Deliver, mqtt: MqttPublisher | undefined) {
    this.#deliver = deliver
    this.#mqtt = mqtt
  }

  /** Starts hearing other instances' events on the broker (the MQTT bus). */
  async listenToBroker (onBadPayload: (topic: string) => void): Promise<void> {
    await this.#mqtt?.subscribeForeign((payload, topic) => {
      // Checked as an ingested line is, and written as this provider writes it.
      const parsed = parseEventLine(payload, 1)
      if (parsed === undefined || 'problem' in parsed) {
        onBadPayload(topic)
        return
      }
      this.#accept([{ message: parsed.event.message, json: jsonTextOf(parsed.json) }], 'another-provider')
    })
  }

  accepted (events: readonly AcceptedEvent[], process: string): void {
    this.#mqtt?.publish(events)
    this.#accept(events, { process })
  }

  brokerStatus (): BrokerStatus | undefined {
    const mqtt = this.#mqtt
    return mqtt === undefined ? undefined : { connected: mqtt.connected, waiting: mqtt.waiting, dropped: mqtt.dropped }
  }

  async close (): Promise<void> {
    await this.#mqtt?.close()
  }

  #accept (events: readonly AcceptedEvent[], origin: Origin): void {
    if (events.length === 0) return
    const first = this.#nextSeq
    this.#nextSeq += events.length
    this.#deliver(first, events, origin)
  }
}
