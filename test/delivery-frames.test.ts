import t from 'tap'
import fc from 'fast-check'
import { DeliveryFrames, messageFrame } from '../src/live/delivery-frames.js'
import type { LiveEvent } from '../src/live/live-event.js'

const cursorOf = (seq: number) => `run-${seq}`

t.test('a filter\'s frames, copied in runs from the delivery\'s, are the frames it would make of its own events, byte for byte; past the bound, none', async (t) => {
  let bounded = 0
  fc.assert(fc.property(
    fc.array(fc.record({ id: fc.string({ unit: 'grapheme', maxLength: 12 }), code: fc.constantFrom('A', 'B', 'C') }), { maxLength: 40 }),
    fc.constantFrom('A', 'B', 'C'),
    fc.option(fc.array(fc.nat(), { maxLength: 40 }), { nil: undefined }),
    fc.nat({ max: 4000 }),
    (drawn, excluded, placesDrawn, maxBytes) => {
      const events: LiveEvent[] = drawn.map(({ id, code }, i) => {
        const message = { message_id: id, message_code: code, message_category: 'alert' as const, date_time: '2025-01-01T00:00:00.000Z', space_id: 's' }
        return { seq: i + 1, message, json: JSON.stringify(message) }
      })
      const places = placesDrawn === undefined ? undefined : [...new Set(placesDrawn.filter((place) => place < events.length))].sort((a, b) => a - b)
      const keeps = (message: LiveEvent['message']) => message.message_code !== excluded
      const own = Buffer.from((places ?? events.map((_, i) => i)).map((i) => events[i]!).filter((event) => keeps(event.message)).map((event) => messageFrame(cursorOf(event.seq), event.json)).join(''))
      const delivery = new DeliveryFrames(events, cursorOf)
      // The bound itself: frames of exactly that many bytes are made, one byte more are not.
      if (!delivery.framesFor(keeps, places, own.length)?.equals(own)) return false
      if (own.length > 0 && delivery.framesFor(keeps, places, own.length - 1) !== undefined) return false
      const frames = delivery.framesFor(keeps, places, maxBytes)
      if (own.length > maxBytes) {
        bounded++
        return frames === undefined
      }
      return frames !== undefined && frames.equals(own)
    }), { numRuns: 3000 })
  t.ok(bounded > 100, `${bounded} deliveries past the bound`)
})

t.test('each filter gets bytes of its own, even when it keeps every frame', async (t) => {
  const message = { message_id: 'm-é', message_code: 'A', message_category: 'alert' as const, date_time: '2025-01-01T00:00:00.000Z', space_id: 's' }
  const delivery = new DeliveryFrames([{ seq: 1, message, json: JSON.stringify(message) }], cursorOf)
  const first = delivery.framesFor(() => true, undefined, 1 << 20)!
  const second = delivery.framesFor(() => true, undefined, 1 << 20)!
  t.ok(first.equals(second))
  first.fill(0)
  t.equal(second.toString(), messageFrame('run-1', JSON.stringify(message)))
})
