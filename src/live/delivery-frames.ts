import type { Message } from '../../schemas/message.js'
import type { LiveEvent } from './live-event.js'

/**
 * A frame of a cursor alone, for a stream the provider ends: EventSource keeps the id as its last
 * event ID and dispatches nothing, so its client resumes from there.
 */
export function cursorFrame (cursor: string): string {
  return `id: ${cursor}\n\n`
}

/** One event as a stream frame. */
export function messageFrame (cursor: string, json: string): string {
  return `id: ${cursor}\nevent: message\ndata: ${json}\n\n`
}

/**
 * One delivery's frames as bytes, made once for every stream: an event's frame (its cursor and
 * its JSON) is the same whichever stream it goes to, so a filter's frames are runs of these bytes
 * copied together. Each distinct filter made and encoded its own text before: 496 streams of
 * different filters and one delivery of 3,000 events took 430–640 ms of the event loop.
 */
export class DeliveryFrames {
  readonly #events: readonly LiveEvent[]
  readonly #cursorOf: (seq: number) => string
  /** Made when a filter first keeps an event of the delivery. */
  #bytes: Buffer | undefined
  /** Where each event's frame ends in #bytes (it starts where the one before ends). */
  #ends: Uint32Array | undefined

  constructor (events: readonly LiveEvent[], cursorOf: (seq: number) => string) {
    this.#events = events
    this.#cursorOf = cursorOf
  }

  /**
   * The frames of the events `keeps` keeps, among those at `places` (ascending; every event when
   * undefined), in order; undefined when they pass `maxBytes`.
   */
  framesFor (keeps: (message: Message) => boolean, places: readonly number[] | undefined, maxBytes: number): Buffer | undefined {
    const events = this.#events
    // Runs of consecutive frames, as start and end offsets.
    const runs: number[] = []
    let total = 0
    let runStart = 0
    let runEnd = -1
    let ends: Uint32Array | undefined
    const count = places === undefined ? events.length : places.length
    for (let k = 0; k < count; k++) {
      const i = places === undefined ? k : places[k]!
      if (!keeps(events[i]!.message)) continue
      ends ??= this.#made().ends
      const start = i === 0 ? 0 : ends[i - 1]!
      const end = ends[i]!
      total += end - start
      if (total > maxBytes) return undefined
      if (start === runEnd) {
        runEnd = end
        continue
      }
      if (runEnd !== -1) runs.push(runStart, runEnd)
      runStart = start
      runEnd = end
    }
    if (runEnd === -1) return NO_FRAMES
    runs.push(runStart, runEnd)
    const bytes = this.#bytes!
    // A copy even of every frame: the streams' unsent data is counted by filter, each filter's frames its own.
    const frames = Buffer.allocUnsafe(total)
    let at = 0
    for (let r = 0; r < runs.length; r += 2) at += bytes.copy(frames, at, runs[r]!, runs[r + 1]!)
    return frames
  }

  /** Every event's frame, one after the other: each written in place (no joined string, whatever the delivery's size). */
  #made (): { bytes: Buffer, ends: Uint32Array } {
    if (this.#bytes !== undefined) return { bytes: this.#bytes, ends: this.#ends! }
    const events = this.#events
    const ends = new Uint32Array(events.length)
    const texts: string[] = new Array<string>(events.length)
    let length = 0
    for (let i = 0; i < events.length; i++) {
      const text = messageFrame(this.#cursorOf(events[i]!.seq), events[i]!.json)
      texts[i] = text
      length += Buffer.byteLength(text)
      ends[i] = length
    }
    const bytes = Buffer.allocUnsafeSlow(length)
    for (let i = 0; i < events.length; i++) bytes.write(texts[i]!, i === 0 ? 0 : ends[i - 1]!)
    this.#bytes = bytes
    this.#ends = ends
    return { bytes, ends }
  }
}

const NO_FRAMES = Buffer.alloc(0)
