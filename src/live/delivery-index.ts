import type { EntitySelection } from '../store/event-store.js'
import type { LiveEvent } from './live-event.js'

/**
 * One delivery's events by device and by space (their places in it), made once when a stream
 * filter of a few entities asks, so that each such filter looks at its entities' events only.
 * Without it every distinct filter checked every event: 2,000 streams of different two-device
 * filters and one ingest of 60,000 events held the event loop 4.5 s (120 million checks).
 */
export class DeliveryIndex {
  readonly #events: readonly LiveEvent[]
  #byDevice: Map<string, number[]> | undefined
  #bySpace: Map<string, number[]> | undefined

  constructor (events: readonly LiveEvent[]) {
    this.#events = events
  }

  /**
   * The places in the delivery of the events a filter's entities (or its scope's, whichever
   * names fewer) can match, in the delivery's order, each once; undefined when looking them up
   * would cost more than checking every event (a filter of as many entities as the delivery has
   * events, or none).
   */
  candidates (entities: EntitySelection | undefined, scope: EntitySelection | undefined): readonly number[] | undefined {
    const selection = smaller(entities, scope)
    if (selection === undefined || selection.deviceIds.size + selection.spaceIds.size >= this.#events.length) return undefined
    if (this.#byDevice === undefined) this.#index()
    const places: number[] = []
    for (const device of selection.deviceIds) appendTo(places, this.#byDevice!.get(device))
    for (const space of selection.spaceIds) appendTo(places, this.#bySpace!.get(space))
    places.sort((a, b) => a - b)
    // An event of a device in one of the spaces is found twice.
    let kept = 0
    for (let i = 0; i < places.length; i++) if (i === 0 || places[i] !== places[i - 1]) places[kept++] = places[i]!
    places.length = kept
    return places
  }

  #index (): void {
    const byDevice = new Map<string, number[]>()
    const bySpace = new Map<string, number[]>()
    for (let i = 0; i < this.#events.length; i++) {
      const { device_id: device, space_id: space } = this.#events[i]!.message
      if (device !== undefined) placesOf(byDevice, device).push(i)
      if (space !== undefined) placesOf(bySpace, space).push(i)
    }
    this.#byDevice = byDevice
    this.#bySpace = bySpace
  }
}

function smaller (a: EntitySelection | undefined, b: EntitySelection | undefined): EntitySelection | undefined {
  if (a === undefined || b === undefined) return a ?? b
  return a.deviceIds.size + a.spaceIds.size <= b.deviceIds.size + b.spaceIds.size ? a : b
}

function placesOf (index: Map<string, number[]>, key: string): number[] {
  let places = index.get(key)
  if (places === undefined) index.set(key, places = [])
  return places
}

function appendTo (places: number[], more: readonly number[] | undefined): void {
  if (more !== undefined) for (const place of more) places.push(place)
}
