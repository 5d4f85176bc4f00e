import { readFile } from 'node:fs/promises'
import type { Message } from '../schemas/message.js'
import type { Dataset } from './dataset.js'

/**
 * New events for the live measurements: each with a message_id of its own (`<prefix>-<index>`),
 * an entity of the data set's entities file (nine in ten a device, in the space the file gives
 * it; the rest a space), a code of its specifications file with that code's category, and a
 * date_time that grows by one millisecond per index from `baseMs`. Event `index` is always the
 * same event (its choices come from a hash of the index), so two contenders can be given the
 * very same events, and none is built before it is asked for.
 */
export class LiveEventSource {
  readonly prefix: string
  readonly baseMs: number
  readonly #devices: Array<{ id: string, space_id: string }>
  readonly #spaces: string[]
  readonly #codes: Array<{ code: string, category: Message['message_category'] }>

  constructor (entities: LiveEntities, prefix: string, baseMs: number) {
    if (entities.devices.length === 0 || entities.spaces.length === 0 || entities.codes.length === 0) {
      throw new Error('the data set has no devices, spaces or codes to make live events of')
    }
    this.#devices = entities.devices
    this.#spaces = entities.spaces
    this.#codes = entities.codes
    this.prefix = prefix
    this.baseMs = baseMs
  }

  /** The index of an event from its message_id, or -1 for an ID of another source. */
  indexOf (messageId: string): number {
    if (!messageId.startsWith(this.prefix + '-')) return -1
    const index = Number(messageId.slice(this.prefix.length + 1))
    return Number.isSafeInteger(index) ? index : -1
  }

  event (index: number): Message {
    const hash = mix(index)
    const code = this.#codes[hash % this.#codes.length]!
    const message: Message = {
      message_id: `${this.prefix}-${index}`,
      message_code: code.code,
      message_category: code.category,
      date_time: new Date(this.baseMs + index).toISOString()
    }
    const pick = mix(hash)
    if (pick % 10 !== 0) {
      const device = this.#devices[(pick >>> 4) % this.#devices.length]!
      message.device_id = device.id
      message.space_id = device.space_id
    } else {
      message.space_id = this.#spaces[(pick >>> 4) % this.#spaces.length]!
    }
    return message
  }

  events (first: number, count: number): Message[] {
    return Array.from({ length: count }, (_, i) => this.event(first + i))
  }

  /** NDJSON of events first … first + count - 1, a line each, as a client posts them. */
  ndjson (first: number, count: number): string {
    let text = ''
    for (let i = 0; i < count; i++) text += JSON.stringify(this.event(first + i)) + '\n'
    return text
  }
}

/** What events are made of: the data set's devices (with their space), spaces and codes. */
export interface LiveEntities {
  devices: Array<{ id: string, space_id: string }>
  spaces: string[]
  codes: Array<{ code: string, category: Message['message_category'] }>
}

export async function readLiveEntities (dataset: Dataset): Promise<LiveEntities> {
  const entities = JSON.parse(await readFile(dataset.entitiesFile, 'utf8')) as { devices: Array<{ id: string, space_id: string }>, spaces: Array<{ id: string }> }
  const specifications = JSON.parse(await readFile(dataset.specificationsFile, 'utf8')) as Array<{ message_code: string, message_category: Message['message_category'] }>
  return {
    devices: entities.devices.map(({ id, space_id: spaceId }) => ({ id, space_id: spaceId })),
    spaces: entities.spaces.map(({ id }) => id),
    codes: specifications.map(({ message_code: code, message_category: category }) => ({ code, category }))
  }
}

/**
 * Where live events' date_times start: recent, and never before the data set's end, so that the
 * scenarios' windows (which end there) hold the same events with or without them.
 */
export function liveBaseMs (dataset: Dataset, nowMs = Date.now()): number {
  return Math.max(dataset.endMs, nowMs - 3 * 3600_000)
}

/** A prefix of message_ids no earlier run used: `bench-<what>-<time in base 36>`. */
export function livePrefix (what: string): string {
  return `bench-${what}-${Date.now().toString(36)}`
}

/** splitmix32's finaliser: a well-spread 32-bit hash of an integer. */
function mix (value: number): number {
  let x = (value + 0x9e3779b9) | 0
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b)
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35)
  return (x ^ (x >>> 16)) >>> 0
}
