import type { EntitiesFile } from '../../schemas/entities.js'
import type { Message } from '../../schemas/message.js'
import type { EventSpecification } from '../../schemas/specifications.js'
import type { MessageCatalog } from './catalog.js'
import { DAY_MS, HOUR_MS } from './daily-rhythm.js'
import { DEVICE_TYPES, type DeviceFamily, type DeviceType } from './device-types.js'
import { faultVariant } from './fault-variants.js'
import { CHANNELS, planIncidents, unfoldIncident, type EntityKind, type Incident, type IncidentPlan } from './incidents.js'
import type { Random } from './random.js'

/**
 * Live events for `npm run simulate`: the generator's model (src/demo/incidents.ts: incidents
 * unfolding as sequences of related codes, one at a time per channel of an entity) played on the
 * clock instead of over a past period. Pure: the entities, the catalog, a Random and the times
 * it is asked at decide everything; the HTTP side is src/demo/live-poster.ts.
 */

/** The generator's default --rate: a realistic day of one device or space, in the model's time. */
export const MODEL_EVENTS_PER_ENTITY_DAY = 0.5

/** As in event-simulation.ts: an incident that would start while its channel is busy waits this long after it (model time). */
const DEFER_MIN_MS = 10 * 60_000
const DEFER_MAX_MS = 6 * HOUR_MS

/** A gap between two calls longer than this pauses the simulation instead of releasing a burst of old events. */
export const DEFAULT_MAX_CATCH_UP_MS = 1000

/** A device or a space that tells stories. */
export interface LiveActor {
  kind: EntityKind
  /** undefined for a space's own events. */
  deviceId: string | undefined
  spaceId: string
}

export interface LiveWorld {
  actors: readonly LiveActor[]
  catalog: MessageCatalog
  /** Devices whose type neither a type tag nor the ID prefix told, and that were given one at random. */
  guessedDevices: number
}

/**
 * The catalog of a specifications file, as the model sees it: every code with its category, and
 * the numbered fault codes (CM_FAULT_101, …) the file holds, by device family.
 */
export function catalogOf (specifications: readonly EventSpecification[]): MessageCatalog {
  const categoryOf = new Map(specifications.map((specification) => [specification.message_code, specification.message_category]))
  const faultCodes = new Map<DeviceFamily, string[]>()
  // A catalog of N codes holds fewer than N numbered codes, the first ones.
  for (let index = 0; index < specifications.length; index++) {
    const variant = faultVariant(index)
    if (!categoryOf.has(variant.code)) continue
    const codes = faultCodes.get(variant.family)
    if (codes === undefined) faultCodes.set(variant.family, [variant.code])
    else codes.push(variant.code)
  }
  return { specifications: [...specifications], categoryOf, faultCodes }
}

/**
 * The actors of an entities file: every device (with the space the file puts it in) and every
 * space. A device's type comes from the type tags of the demo data (`soap-dispensers`, …), else
 * from its ID prefix (`soap-00004`), else it is drawn by the types' shares.
 */
export function buildLiveWorld (entities: EntitiesFile, catalog: MessageCatalog, random: Random): LiveWorld {
  const typeByTag = new Map<string, DeviceType>()
  for (const type of DEVICE_TYPES) {
    const tag = entities.tags.find((candidate) => candidate.id === type.tagId)
    for (const id of tag?.device_ids ?? []) if (!typeByTag.has(id)) typeByTag.set(id, type)
  }
  let total = 0
  const cumulativeShares = DEVICE_TYPES.map((type) => (total += type.share))
  let guessedDevices = 0
  const devices = entities.devices.map((device): LiveActor => {
    let type = typeByTag.get(device.id) ?? DEVICE_TYPES.find((candidate) => device.id.startsWith(`${candidate.idPrefix}-`))
    if (type === undefined) {
      type = DEVICE_TYPES[random.weighted(cumulativeShares)]!
      guessedDevices++
    }
    return { kind: type.key, deviceId: device.id, spaceId: device.space_id }
  })
  const spaces = entities.spaces.map((space): LiveActor => ({ kind: 'space', deviceId: undefined, spaceId: space.id }))
  return { actors: [...devices, ...spaces], catalog, guessedDevices }
}

export interface LiveOptions {
  /** Average events per second, every actor together. */
  rate: number
  /** When the simulation starts, in milliseconds since the epoch. */
  startMs: number
  /** Message IDs are this, a dash and a count from 1: one prefix per run keeps runs apart. */
  idPrefix: string
  maxCatchUpMs?: number
}

interface PendingEvent {
  /** Model time, in milliseconds since the start. */
  modelMs: number
  /** Order of scheduling, to break ties the same way every time. */
  seq: number
  actor: number
  code: string
}

/** The events due at given moments, as they happen. */
export interface EventSource {
  take (nowMs: number): Message[]
}

/**
 * The model runs `speedup` times faster than the clock, so that the actors together give
 * options.rate events a second while each keeps a realistic pace relative to its own stories: at
 * 5 events a second over the 144 demo entities a refill runs out seconds to a minute after its
 * low-level notice, as days after it in the generated history. Never slower than real time: with
 * many entities and a low rate each entity is simply more eventful than in the generated data.
 */
export class LiveEventSource implements EventSource {
  readonly speedup: number
  /** The actors that have a story in this catalog. */
  readonly activeActors: number
  readonly #world: LiveWorld
  readonly #random: Random
  readonly #idPrefix: string
  readonly #maxCatchUpMs: number
  readonly #plans: readonly IncidentPlan[]
  /** Running totals of each actor's incident rate, to draw who opens the next incident. */
  readonly #cumulativeRates: number[]
  /** Mean model time between two incidents, any actor. */
  readonly #meanWaitMs: number
  /** When each actor's current incident on each channel ends, model time. */
  readonly #busyUntil: Float64Array
  readonly #pending = new EventHeap()
  #nextIncidentMs: number
  /** Model time up to which events were released. */
  #modelNowMs = 0
  /** Wall-clock time of the model's start, moved on by each pause. */
  #originMs: number
  #seq = 0
  #count = 0

  constructor (world: LiveWorld, random: Random, options: LiveOptions) {
    if (!(options.rate > 0)) throw new RangeError('the rate must be above 0')
    this.#world = world
    this.#random = random
    this.#idPrefix = options.idPrefix
    this.#originMs = options.startMs
    this.#maxCatchUpMs = options.maxCatchUpMs ?? DEFAULT_MAX_CATCH_UP_MS
    const plans = new Map<EntityKind, IncidentPlan>()
    this.#plans = world.actors.map((actor) => {
      let plan = plans.get(actor.kind)
      if (plan === undefined) plans.set(actor.kind, plan = planIncidents(actor.kind, world.catalog))
      return plan
    })
    this.activeActors = this.#plans.filter((plan) => plan.meanEvents > 0).length
    if (this.activeActors === 0) throw new RangeError('no device or space has a message code of the catalog to tell')

    // Every active actor gives the same number of events on average, as in the generator.
    this.speedup = Math.max(1, options.rate * DAY_MS / 1000 / (this.activeActors * MODEL_EVENTS_PER_ENTITY_DAY))
    const eventsPerModelMs = options.rate / 1000 / this.speedup / this.activeActors
    let total = 0
    this.#cumulativeRates = this.#plans.map((plan) => (total += plan.meanEvents === 0 ? 0 : eventsPerModelMs / plan.meanEvents))
    this.#meanWaitMs = 1 / total
    this.#busyUntil = new Float64Array(world.actors.length * CHANNELS.length).fill(-Infinity)
    this.#nextIncidentMs = random.exponential(this.#meanWaitMs)
  }

  /** Events given so far (the count in the last message_id). */
  get count (): number {
    return this.#count
  }

  /**
   * The events due by nowMs that no earlier call returned, in time order, each dated when it
   * happened (at or before nowMs). When the last call was more than maxCatchUpMs ago (the caller
   * was held up: a provider down, a suspended laptop), the model moves on by only that much and the
   * rest of the gap is skipped: what happens next is dated now, not a burst from the past.
   */
  take (nowMs: number): Message[] {
    const elapsedMs = nowMs - this.#originMs - this.#modelNowMs / this.speedup
    if (elapsedMs > this.#maxCatchUpMs) this.#originMs += elapsedMs - this.#maxCatchUpMs
    // A clock that went back releases nothing until it catches up.
    const modelNowMs = Math.max(this.#modelNowMs, (nowMs - this.#originMs) * this.speedup)
    this.#modelNowMs = modelNowMs

    while (this.#nextIncidentMs <= modelNowMs) {
      this.#openIncident(this.#nextIncidentMs)
      this.#nextIncidentMs += this.#random.exponential(this.#meanWaitMs)
    }
    const due: Message[] = []
    for (let next = this.#pending.peek(); next !== undefined && next.modelMs <= modelNowMs; next = this.#pending.peek()) {
      this.#pending.pop()
      due.push(this.#message(next))
    }
    return due
  }

  #openIncident (atMs: number): void {
    const random = this.#random
    const actor = random.weighted(this.#cumulativeRates)
    const plan = this.#plans[actor]!
    const incident: Incident = plan.incidents[random.weighted(plan.cumulativeWeights)]!
    const slot = actor * CHANNELS.length + incident.channel
    let start = atMs
    if (start <= this.#busyUntil[slot]!) start = this.#busyUntil[slot]! + Math.round(random.logUniform(DEFER_MIN_MS, DEFER_MAX_MS))
    this.#busyUntil[slot] = unfoldIncident(incident, start, random, (modelMs, code) => {
      this.#pending.push({ modelMs, seq: this.#seq++, actor, code })
    })
  }

  #message (event: PendingEvent): Message {
    const actor = this.#world.actors[event.actor]!
    const message: Message = {
      message_id: `${this.#idPrefix}-${++this.#count}`,
      message_code: event.code,
      message_category: this.#world.catalog.categoryOf.get(event.code)!,
      date_time: new Date(Math.floor(this.#originMs + event.modelMs / this.speedup)).toISOString()
    }
    if (actor.deviceId !== undefined) message.device_id = actor.deviceId
    message.space_id = actor.spaceId
    return message
  }
}

/** A binary min-heap of pending events by model time, then scheduling order. */
class EventHeap {
  readonly #items: PendingEvent[] = []

  peek (): PendingEvent | undefined {
    return this.#items[0]
  }

  push (item: PendingEvent): void {
    const items = this.#items
    items.push(item)
    let index = items.length - 1
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (!before(items[index]!, items[parent]!)) break
      swap(items, index, parent)
      index = parent
    }
  }

  pop (): PendingEvent | undefined {
    const items = this.#items
    const top = items[0]
    const last = items.pop()
    if (items.length === 0 || last === undefined) return top
    items[0] = last
    let index = 0
    for (;;) {
      const left = 2 * index + 1
      const right = left + 1
      let smallest = index
      if (left < items.length && before(items[left]!, items[smallest]!)) smallest = left
      if (right < items.length && before(items[right]!, items[smallest]!)) smallest = right
      if (smallest === index) break
      swap(items, index, smallest)
      index = smallest
    }
    return top
  }
}

function before (a: PendingEvent, b: PendingEvent): boolean {
  return a.modelMs < b.modelMs || (a.modelMs === b.modelMs && a.seq < b.seq)
}

function swap (items: PendingEvent[], i: number, j: number): void {
  const item = items[i]!
  items[i] = items[j]!
  items[j] = item
}
