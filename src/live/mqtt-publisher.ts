import { connect, type IClientPublishOptions, type IPublishPacket, type MqttClient } from 'mqtt'
import type { Socket } from 'node:net'
import type { Message } from '../../schemas/message.js'
import { eventTopic } from './mqtt-topic.js'

export interface MqttPublisherLog {
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
  error (obj: object, msg: string): void
}

export interface MqttPublisherOptions {
  /** The broker: mqtt://, mqtts://, ws:// or wss://. */
  url: string
  username?: string
  password?: string
  /** The first levels of every event topic, e.g. DEFAULT_MQTT_TOPIC_PREFIX. */
  topicPrefix: string
  /** How many events may wait for the broker; beyond it the oldest waiting ones are dropped. */
  queueMax: number
  /** This provider instance: the MQTT client ID's suffix and the `origin` user property of what it publishes. */
  instanceId: string
  log: MqttPublisherLog
}

/** An accepted event and its JSON, exactly the bytes the HTTP endpoint serves for it. */
export interface PublishableEvent {
  message: Message
  json: string
}

export type ForeignEventHandler = (json: string, topic: string) => void

interface Outgoing {
  topic: string
  json: string
}

/** Publishes handed to MQTT.js and not acknowledged yet, at most (and no more than the broker's Receive Maximum). */
const MAX_IN_FLIGHT = 1000
const DROP_LOG_INTERVAL_MS = 10_000
const CLOSE_FLUSH_MS = 2000
const CLOSE_END_MS = 1000
/** How long a publish the broker turned away for a passing reason (quota, busy, rate) waits before it is tried again. */
const RETRY_PAUSE_MS = 1000

/** PUBACK reason codes that say "not now" rather than "never": the event is published again later. */
const TRANSIENT_REFUSALS = new Set([
  0x89, // Server busy
  0x96, // Message rate too high
  0x97 // Quota exceeded
])

/** The URL without credentials, for logs. */
function safeUrl (url: string): string {
  try {
    const parsed = new URL(url)
    parsed.username = ''
    parsed.password = ''
    return parsed.toString()
  } catch {
    return '(unparsable URL)'
  }
}

function utf8Length (text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/**
 * Publishes accepted events to an MQTT broker (MQTT 5, QoS 1), at least once: events wait in a
 * bounded FIFO queue while the broker is away, and what was in flight when a connection dropped
 * is published again after the reconnection (MQTT.js keeps unacknowledged QoS 1 publishes in its
 * outgoing store and sends them again, in order, before it reports the connection as up).
 * Never throws because of the broker: every failure is logged, once per state change.
 */
export class MqttPublisher {
  readonly #client: MqttClient
  readonly #prefix: string
  readonly #instanceId: string
  readonly #queueMax: number
  readonly #log: MqttPublisherLog
  readonly #url: string
  readonly #publishOptions: IClientPublishOptions

  /** Events waiting to be handed to MQTT.js: a FIFO, #queue[#head] is the oldest. */
  #queue: Array<Outgoing | undefined> = []
  #head = 0
  #inFlight = 0
  /** Connected, and MQTT.js has sent again what it held from the previous connection ('connect' was emitted). */
  #ready = false
  #everConnected = false
  #downSince = 0
  #errorLogged = false
  #disconnectReason: number | undefined
  #pumpScheduled = false
  #pausedUntil = 0
  #pauseTimer: NodeJS.Timeout | undefined
  /** close() was called: no more events are accepted once it ends the client. */
  #ending = false
  #closePromise: Promise<void> | undefined

  #dropped = 0
  #droppedLogged = 0
  #lastDropLog = 0
  #dropLogTimer: NodeJS.Timeout | undefined
  #refused = 0

  readonly #foreignHandlers: ForeignEventHandler[] = []
  #subscription: Promise<void> | undefined

  constructor (options: MqttPublisherOptions) {
    this.#prefix = options.topicPrefix
    this.#instanceId = options.instanceId
    this.#queueMax = Math.max(0, Math.floor(options.queueMax))
    this.#log = options.log
    this.#url = safeUrl(options.url)
    this.#publishOptions = {
      qos: 1,
      retain: false,
      properties: { contentType: 'application/json', userProperties: { origin: options.instanceId } }
    }
    this.#client = connect(options.url, {
      protocolVersion: 5,
      username: options.username,
      password: options.password,
      reconnectPeriod: 1000,
      connectTimeout: 5000,
      clean: true,
      clientId: 'events-provider-' + options.instanceId,
      // A refused CONNACK (bad credentials, broker not ready) would otherwise stop reconnecting for good.
      reconnectOnConnackError: true
    })
    this.#client.on('connect', () => this.#onConnect())
    this.#client.on('close', () => this.#onClose())
    this.#client.on('error', (err) => this.#onError(err))
    this.#client.on('disconnect', (packet) => { this.#disconnectReason = packet.reasonCode })
    this.#client.on('message', (topic, payload, packet) => this.#onMessage(topic, payload, packet))
  }

  /** Connected to the broker now. */
  get connected (): boolean {
    return this.#client.connected
  }

  /** Events not acknowledged by the broker yet: waiting in the queue, or in flight. */
  get waiting (): number {
    return this.#queue.length - this.#head + this.#inFlight
  }

  /** Events dropped since the start because the queue was full (the oldest waiting ones go first). */
  get dropped (): number {
    return this.#dropped
  }

  /** Events the broker refused for good (PUBACK with an error such as "Not authorized"), or too large for it. */
  get refused (): number {
    return this.#refused
  }

  /** Queues events for publication and returns at once; each goes to its eventTopic with its JSON as payload. */
  publish (events: ReadonlyArray<PublishableEvent>): void {
    if (this.#ending) return
    for (const { message, json } of events) this.#queue.push({ topic: eventTopic(this.#prefix, message), json })
    // Hand what the connection can take first, so a batch larger than queueMax is not cut while connected.
    this.#pump()
    this.#trim()
  }

  /**
   * Calls handler with the JSON and topic of every event published under the prefix by other
   * provider instances (user property `origin` other than this instanceId). Resolves once the
   * broker granted the subscription, or at once when not connected: MQTT.js then sends it when
   * the connection comes up, and subscribes again after every reconnection (clean sessions).
   * Rejects when the broker refuses the subscription.
   */
  subscribeForeign (handler: ForeignEventHandler): Promise<void> {
    this.#foreignHandlers.push(handler)
    this.#subscription ??= new Promise<void>((resolve, reject) => {
      const filter = `${this.#prefix}/#`
      const wasConnected = this.#client.connected
      // nl (No Local): the broker does not even send back what this client published.
      this.#client.subscribe(filter, { qos: 1, nl: true }, (err) => {
        if (err === null || err === undefined) {
          resolve()
        } else if (err.message.startsWith('Subscribe error')) {
          this.#log.error({ err, filter }, 'MQTT broker refused the subscription to events of other instances')
          reject(err)
        } else {
          // Connection closed before the SUBACK: MQTT.js subscribes again once reconnected.
          resolve()
        }
      })
      if (!wasConnected) resolve()
    })
    return this.#subscription
  }

  /**
   * Tries for up to ~2 s to deliver what waits (when connected), then ends the client. Never
   * hangs, with or without a broker. Events still waiting then are logged and lost.
   */
  close (): Promise<void> {
    this.#closePromise ??= this.#close()
    return this.#closePromise
  }

  async #close (): Promise<void> {
    const deadline = Date.now() + CLOSE_FLUSH_MS
    while (this.waiting > 0 && this.#client.connected && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    this.#ending = true
    clearTimeout(this.#pauseTimer)
    clearTimeout(this.#dropLogTimer)
    this.#logDrops()
    const lost = this.waiting
    if (lost > 0) this.#log.warn({ lost, url: this.#url }, 'MQTT publisher closed with events the broker did not acknowledge')
    // A graceful end waits for every in-flight acknowledgement, forever if the broker is gone.
    const force = !(this.#client.connected && this.#inFlight === 0)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#client.stream?.destroy()
        resolve()
      }, CLOSE_END_MS)
      this.#client.end(force, {}, () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  #onConnect (): void {
    // Each event is a small write: with Nagle's algorithm one could wait for the broker's delayed
    // ACK (40 ms on Linux) while another is unacknowledged, the push latency's p99 and max.
    (this.#client.stream as Partial<Socket>).setNoDelay?.(true)
    this.#ready = true
    this.#errorLogged = false
    this.#disconnectReason = undefined
    if (!this.#everConnected) {
      this.#everConnected = true
      this.#log.info({ url: this.#url, waiting: this.waiting }, 'MQTT broker connected')
    } else {
      this.#log.info({ url: this.#url, waiting: this.waiting, downMs: Date.now() - this.#downSince }, 'MQTT broker reconnected')
    }
    this.#pump()
  }

  #onClose (): void {
    const wasReady = this.#ready
    this.#ready = false
    if (wasReady && !this.#ending) {
      this.#downSince = Date.now()
      const reason = this.#disconnectReason
      this.#log.warn({
        url: this.#url,
        waiting: this.waiting,
        ...(reason !== undefined ? { reasonCode: reason } : {})
      }, reason === 0x8e
        ? 'MQTT connection lost: session taken over (is another instance using the same instance ID?); events are kept and published after reconnection'
        : 'MQTT connection lost; events are kept and published after reconnection')
    }
  }

  #onError (err: Error): void {
    // Also stops an 'error' event without listener from crashing the process.
    if (this.#errorLogged || this.#ending) return
    this.#errorLogged = true
    this.#log.warn({ err, url: this.#url, waiting: this.waiting }, 'MQTT broker unreachable or failing; retrying every second (logged once until connected)')
  }

  #onMessage (topic: string, payload: Buffer, packet: IPublishPacket): void {
    if (this.#foreignHandlers.length === 0 || !topic.startsWith(this.#prefix + '/')) return
    const origin = packet.properties?.userProperties?.origin
    if (origin === this.#instanceId || (Array.isArray(origin) && origin.includes(this.#instanceId))) return
    const json = payload.toString('utf8')
    for (const handler of this.#foreignHandlers) {
      try {
        handler(json, topic)
      } catch (err) {
        this.#log.error({ err, topic }, 'handler of an event from another instance failed')
      }
    }
  }

  /** Hands waiting events to MQTT.js while connected, up to the in-flight limit. */
  #pump (): void {
    if (!this.#ready || this.#ending || Date.now() < this.#pausedUntil) return
    const server = this.#client.serverProperties
    const limit = Math.min(MAX_IN_FLIGHT, server?.receiveMaximum ?? MAX_IN_FLIGHT)
    const maxPacket = server?.maximumPacketSize
    while (this.#inFlight < limit && this.#head < this.#queue.length) {
      const item = this.#queue[this.#head]!
      this.#queue[this.#head++] = undefined
      if (maxPacket !== undefined && this.#packetSize(item) > maxPacket) {
        this.#refuse(item, undefined, `larger than the broker's maximum packet size ${maxPacket}`)
        continue
      }
      this.#send(item)
    }
    this.#compact()
  }

  #send (item: Outgoing): void {
    this.#inFlight++
    this.#client.publish(item.topic, item.json, this.#publishOptions, (err) => {
      this.#inFlight--
      if (this.#ending) return
      if (err !== undefined && err !== null) {
        const code = (err as { code?: unknown }).code
        if (typeof code === 'number' && code >= 0x80 && !TRANSIENT_REFUSALS.has(code)) {
          this.#refuse(item, code, err.message)
        } else {
          // Not published (connection closed, or a passing refusal): back to the front of the queue.
          this.#requeue(item)
          if (typeof code === 'number') this.#pause()
        }
      }
      this.#schedulePump()
    })
  }

  /** An upper bound of the PUBLISH packet's size. */
  #packetSize (item: Outgoing): number {
    const properties = 3 + 'application/json'.length + 5 + 'origin'.length + utf8Length(this.#instanceId)
    return 5 + 2 + utf8Length(item.topic) + 2 + 4 + properties + utf8Length(item.json)
  }

  #refuse (item: Outgoing, reasonCode: number | undefined, reason: string): void {
    this.#refused++
    this.#log.error({ topic: item.topic, reasonCode, reason, refused: this.#refused }, 'MQTT broker refused an event for good; it is not published')
  }

  #requeue (item: Outgoing): void {
    if (this.#head > 0) this.#queue[--this.#head] = item
    else this.#queue.unshift(item)
    this.#trim()
  }

  #pause (): void {
    this.#pausedUntil = Date.now() + RETRY_PAUSE_MS
    if (this.#pauseTimer === undefined) {
      this.#pauseTimer = setTimeout(() => {
        this.#pauseTimer = undefined
        this.#pump()
      }, RETRY_PAUSE_MS)
      this.#pauseTimer.unref()
    }
  }

  /** Acknowledgements come in bursts: one pump for a burst, and never from inside MQTT.js's callback. */
  #schedulePump (): void {
    if (this.#pumpScheduled) return
    this.#pumpScheduled = true
    setImmediate(() => {
      this.#pumpScheduled = false
      this.#pump()
    })
  }

  /** Drops the oldest waiting events beyond queueMax. */
  #trim (): void {
    const excess = this.#queue.length - this.#head - this.#queueMax
    if (excess <= 0) return
    this.#queue.fill(undefined, this.#head, this.#head + excess)
    this.#head += excess
    this.#dropped += excess
    this.#compact()
    this.#noteDrops()
  }

  #compact (): void {
    if (this.#head === this.#queue.length) {
      this.#queue = []
      this.#head = 0
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
    }
  }

  /** One warn line at most every DROP_LOG_INTERVAL_MS, with the running count. */
  #noteDrops (): void {
    if (this.#dropLogTimer !== undefined) return
    const wait = this.#lastDropLog + DROP_LOG_INTERVAL_MS - Date.now()
    if (wait <= 0) {
      this.#logDrops()
      return
    }
    this.#dropLogTimer = setTimeout(() => {
      this.#dropLogTimer = undefined
      this.#logDrops()
    }, wait)
    this.#dropLogTimer.unref()
  }

  #logDrops (): void {
    const fresh = this.#dropped - this.#droppedLogged
    if (fresh === 0) return
    this.#droppedLogged = this.#dropped
    this.#lastDropLog = Date.now()
    this.#log.warn({ dropped: this.#dropped, droppedNow: fresh, queueMax: this.#queueMax, connected: this.#client.connected },
      `MQTT queue full: dropped the ${fresh} oldest waiting event(s), ${this.#dropped} since start`)
  }
}
