import cluster from 'node:cluster'
import { randomBytes } from 'node:crypto'
import fp from 'fastify-plugin'
import { Counter, Gauge } from 'prom-client'
import type { FastifyBaseLogger } from 'fastify'
import type { MqttSettings, StreamSettings } from '../src/config.js'
import { messageIdOf, type StoredEvent } from '../src/data/event-lines.js'
import { jsonBytesOf } from '../src/data/json-bytes.js'
import { StoreUnavailableError } from '../src/store/event-store.js'
import { encodeMessage } from '../src/store/message-json.js'
import { askedOtherwise, scopeSight } from '../src/live/asked-entities.js'
import { ClusterWorkerBus } from '../src/live/cluster-bus.js'
import { EventLog } from '../src/live/event-log.js'
import { WrittenEvent, type AcceptedEvent, type BrokerStatus, type LiveBus } from '../src/live/live-bus.js'
import { LocalBus } from '../src/live/local-bus.js'
import { MqttPublisher } from '../src/live/mqtt-publisher.js'
import { StreamSubscribers } from '../src/live/stream-subscribers.js'
import type { IngestEvent, WriteOutcome } from '../src/store/event-writer.js'
import { IngestQueue, type PendingIngest } from '../src/live/ingest-queue.js'
import type { TokenScope } from '../schemas/tokens.js'
import type { EntityRegistry } from '../src/registry/entity-registry.js'

/** The live side of the provider: ingest into the store, and push to stream subscribers and MQTT. */
export interface LiveEvents {
  /** Accepted events, kept for streams that resume (Last-Event-ID). */
  readonly log: EventLog
  /** This process's open streams. */
  readonly streams: StreamSubscribers
  /**
   * Writes events to the store (one writer at a time across the provider's processes), then
   * hands those it stored to the bus: streams, other workers, MQTT.
   */
  ingest (events: readonly IngestEvent[]): Promise<WriteOutcome>
  /** Whether this process is writing an event with this ID right now (a replay leaves it to the live part). */
  isBeingWritten (messageId: string): boolean
  /**
   * An ingest request's handler holds the shutdown of the streams until it is done (call the
   * function it returns then, once): its events reach the open streams before they end.
   */
  holdStreams (): () => void
  brokerStatus (): BrokerStatus | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    live: LiveEvents
  }
}

export interface LiveEventsOptions {
  stream: StreamSettings
  mqtt: MqttSettings | undefined
}

/** How long a shutdown waits for the ingests under way before it ends the streams. */
const SHUTDOWN_INGEST_WAIT_MS = 5000

/** The variable a cluster's primary passes its log id to its workers in (not configuration). */
export const LOG_ID_VARIABLE = 'EVENTS_PROVIDER_LOG_ID'

/** An MQTT publisher for these settings (one per provider instance: the process, or a cluster's primary). */
export function mqttPublisher (settings: MqttSettings, log: FastifyBaseLogger): MqttPublisher {
  return new MqttPublisher({
    url: settings.url,
    username: settings.username,
    password: settings.password,
    topicPrefix: settings.topicPrefix,
    queueMax: settings.queueMax,
    instanceId: randomBytes(6).toString('hex'),
    log
  })
}

export default fp<LiveEventsOptions>(async function liveEvents (fastify, options) {
  let bus: LiveBus
  if (cluster.isWorker) {
    bus = new ClusterWorkerBus(process.env[LOG_ID_VARIABLE] ?? 'worker')
  } else {
    const local = new LocalBus(options.mqtt === undefined ? undefined : mqttPublisher(options.mqtt, fastify.log))
    await local.listenToBroker((topic) => fastify.log.warn({ topic }, 'a message on the MQTT bus that is not an event; ignored'))
    bus = local
  }
  const log = new EventLog(bus.logId, { events: options.stream.retentionEvents, ms: options.stream.retentionMs })
  const cuts = new Counter({ name: 'stream_disconnects_total', help: 'Streams cut for the provider\'s sake, by reason: own_bound (STREAM_MAX_BUFFER_BYTES: a client that does not read), all_bound (STREAM_MAX_UNSENT_BYTES), too_large (a delivery larger than a stream\'s bound; ended cleanly)', labelNames: ['reason'] as const, registers: [fastify.metrics] })
  const streams = new StreamSubscribers(options.stream, fastify.log, (reason, count) => { cuts.inc({ reason }, count) })
  const cursorOf = (seq: number) => log.cursorOf(seq)
  // The groups being written now, and their IDs as a set, made when a replay first asks (adding
  // and removing every ingested ID for the rare replay was a few percent of an ingest's time).
  const beingWritten = new Set<readonly PendingIngest[]>()
  let beingWrittenIds: Set<string> | undefined
  const isBeingWritten = (messageId: string): boolean => {
    if (beingWritten.size === 0) return false
    if (beingWrittenIds === undefined) {
      beingWrittenIds = new Set()
      for (const group of beingWritten) for (const { events } of group) for (const { event } of events) beingWrittenIds.add(messageIdOf(event))
    }
    return beingWrittenIds.has(messageId)
  }

  bus.listen((events, source) => {
    if (source === 'this-process' && cluster.isWorker) unechoed = Math.max(0, unechoed - events.length)
    // Another worker wrote these into the store this process keeps a copy of.
    if (source === 'this-provider') {
      fastify.events.takeWrittenElsewhere(events.map(({ message }): StoredEvent => ({ message, epochMs: Date.parse(message.date_time) })))
    }
    log.append(events)
    // The streams get them on the next turn, so the ingest's answer is not held up by thousands of
    // writes; in order, and a stream that began meanwhile skips what its resume already held.
    setImmediate(() => streams.deliver(events, cursorOf, fastify.entityRegistry, beingWritten.size === 0))
  })
  if (cluster.isWorker) {
    // Now that the bus is heard: what the other workers wrote while this one loaded the store
    // (a worker started again while the others serve), before it serves or writes anything.
    const taken = await fastify.events.takeAppendedSinceLoad()
    if (taken > 0) fastify.log.info({ events: taken }, 'took the events other workers wrote while this one loaded the store')
  }

  const status = () => bus.brokerStatus()
  const gauge = (name: string, help: string, value: () => number | undefined) => {
    fastify.metrics.registerMetric(new Gauge({ name, help, registers: [], collect () { const v = value(); if (v !== undefined) this.set(v) } }))
  }
  gauge('stream_subscribers', 'Open event streams (SSE) in this process', () => streams.count)
  gauge('stream_log_events', 'Accepted events kept for resuming streams', () => log.size)
  gauge('stream_unsent_bytes', 'The unsent data of this process\'s streams, as last estimated (frames shared by one filter\'s streams once; see STREAM_MAX_UNSENT_BYTES)', () => streams.unsentBytes)
  if (options.mqtt !== undefined) {
    gauge('mqtt_connected', 'Whether the MQTT broker is connected (1) or not (0)', () => { const s = status(); return s === undefined ? undefined : s.connected ? 1 : 0 })
    gauge('mqtt_backlog_events', 'Accepted events waiting to be published to, or acknowledged by, the MQTT broker', () => status()?.waiting)
    gauge('mqtt_dropped_events', 'Events dropped since start because more than MQTT_QUEUE_MAX waited for the broker', () => status()?.dropped)
  }

  // Ingest requests under way (holdStreams), and a worker's events on their way through the
  // cluster's primary and back: a shutdown ends the streams once there are none of either.
  let holding = 0
  let unechoed = 0
  /** Writes a group; resolves with the store's StoreUnavailableError when it failed one of them. */
  const writeGroup = async (group: readonly PendingIngest[]): Promise<StoreUnavailableError | undefined> => {
    beingWritten.add(group)
    beingWrittenIds = undefined
    try {
      const outcomes = await Promise.allSettled(group.map(({ events }) => fastify.events.write(events)))
      // The whole group's events in one publication: each stream then gets them in one write
      // (with 10,000 streams, a write per stream per ingest of the group held the next group back).
      const accepted: AcceptedEvent[] = []
      for (const settled of outcomes) {
        if (settled.status === 'fulfilled') for (const { event, json } of settled.value.stored) accepted.push(new WrittenEvent(event, json))
      }
      if (accepted.length > 0) {
        if (cluster.isWorker) unechoed += accepted.length
        bus.publish(accepted)
      }
      let unavailable: StoreUnavailableError | undefined
      outcomes.forEach((settled, i) => {
        if (settled.status === 'fulfilled') group[i]!.resolve(settled.value)
        else group[i]!.reject(settled.reason)
        if (settled.status === 'rejected' && settled.reason instanceof StoreUnavailableError) unavailable ??= settled.reason
      })
      return unavailable
    } finally {
      beingWritten.delete(group)
      beingWrittenIds = undefined
    }
  }
  const queue = new IngestQueue({
    writeGroup,
    exclusive: (write) => bus.exclusive(write),
    onFailure: (error) => { fastify.log.error({ err: error }, 'the ingest queue failed') }
  })

  // Another worker died: it may have appended events and died before announcing them. Each
  // worker takes those it does not have (the memory store reads them back from its file's end)
  // and announces them, so that every worker serves and pushes them, and judges IDs against them.
  bus.onProcessDied?.(async () => {
    let taken: readonly StoredEvent[]
    try {
      taken = await fastify.events.takeUnannounced()
    } catch (error) {
      fastify.log.error({ err: error }, 'cannot take the events a dead worker may have written; writes wait until it can')
      throw error
    }
    if (taken.length === 0) return
    fastify.log.warn({ events: taken.length }, 'took the events a worker wrote but died before announcing; announcing them now')
    unechoed += taken.length
    bus.publish(taken.map((event) => new WrittenEvent(event, jsonBytesOf(encodeMessage(event.message)))))
  })
  fastify.decorate('live', {
    log,
    streams,
    ingest: (events: readonly IngestEvent[]) => queue.ingest(events),
    isBeingWritten,
    brokerStatus: () => bus.brokerStatus(),
    holdStreams: () => {
      holding++
      let released = false
      return () => {
        if (released) return
        released = true
        holding--
      }
    }
  })

  // An open stream was let in once. When the tokens or the registry change, one whose token is
  // gone, may not read any more, or would now see other entities is ended cleanly: its client
  // reconnects with Last-Event-ID, and is let in, or not, as its token says now. (A JWT's stream
  // ends when the JWT expires: src/routes/event-stream.ts.)
  fastify.tokens.onReplaced(() => {
    streams.endWhere((stream) => {
      const key = stream.opener?.directoryKey
      if (key === undefined) return false
      const now = fastify.tokens.byKey(key)
      return now === undefined || !now.read || JSON.stringify(now.scope) !== JSON.stringify(stream.opener!.principal.scope)
    }, 'its token was revoked or scoped otherwise')
  })
  // A scope also covers the devices whose registry space it covers: a device that moved changes
  // what it covers without a change to its lists. Compared once per scope (tokens share theirs).
  let previous = fastify.entityRegistry
  fastify.onEntitiesReloaded((registry) => {
    const before = previous
    previous = registry
    // Found once (a reload moves few devices, if any), then checked against each scope's spaces.
    let moved: ReturnType<EntityRegistry['movedSince']> | undefined
    const movedDevices = new Map<TokenScope, boolean>()
    streams.endWhere((stream) => {
      const scope = stream.opener?.principal.scope
      const seen = stream.filter.scope
      if (scope === undefined || seen === undefined) return false
      const now = registry.visibleOf(scope)
      if (!sameMembers(now.deviceIds, seen.deviceIds) || !sameMembers(now.spaceIds, seen.spaceIds)) return true
      let changed = movedDevices.get(scope)
      if (changed === undefined) {
        moved ??= registry.movedSince(before)
        changed = moved.some((device) => (device.then !== undefined && now.spaceIds.has(device.then)) !== (device.now !== undefined && now.spaceIds.has(device.now)))
        movedDevices.set(scope, changed)
      }
      return changed
    }, 'its scope covers other entities in the reloaded registry')
    // A stream's filter was resolved when it opened: one whose tags have other members now, or
    // that named a device or space the registry has only now, would go on without the events the
    // same request selects from now on (a new device of a tag it follows, say). It ends cleanly,
    // given its cursor (one that named a new device had had no event, so no cursor: a review
    // found it reconnect without one and miss the device's first events), and its client,
    // reconnecting with Last-Event-ID, is resolved afresh and misses nothing.
    const changes = registry.changesSince(before)
    if (changes.tagIds.size + changes.addedDeviceIds.size + changes.addedSpaceIds.size === 0) return
    const seesFor = scopeSight(registry, before)
    streams.endWhere((stream) => {
      const asked = stream.opener?.asked
      if (asked === undefined) return false
      const scope = stream.opener!.principal.scope
      return askedOtherwise(asked, changes, scope === undefined ? undefined : seesFor(scope))
    }, 'the entities it asked for are others in the reloaded registry', cursorOf)
    streams.registryReloaded()
  })

  // Streams end before the server waits for its connections to close, but after the ingests
  // under way (new requests are refused by then) have handed their events to them: a stream
  // ended first missed the events acknowledged during the shutdown. Bounded: a stuck ingest does
  // not hold the shutdown for longer than SHUTDOWN_INGEST_WAIT_MS.
  fastify.addHook('preClose', async () => {
    // Also until this worker's own events came back from the cluster's primary (the bus's round trip).
    const deadline = Date.now() + SHUTDOWN_INGEST_WAIT_MS
    const underWay = () => holding > 0 || unechoed > 0
    while (underWay() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    // With WORKERS > 1, also until the other workers' ingests under way are done: their events
    // reach this worker's streams before the primary's word that they are.
    await bus.settled(deadline - Date.now())
    // The deliveries of the last group wait for the next turn (the bus's listener above).
    await new Promise((resolve) => setImmediate(resolve))
    streams.endAll()
  })
  fastify.addHook('onClose', async () => { await bus.close() })
}, { name: 'live-events', dependencies: ['event-store', 'entity-registry', 'authentication', 'metrics'], fastify: '5.x' })

function sameMembers (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false
  for (const member of a) if (!b.has(member)) return false
  return true
}
