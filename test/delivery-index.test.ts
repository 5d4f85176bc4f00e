import t from 'tap'
import fc from 'fast-check'
import type { Message } from '../schemas/message.js'
import { DeliveryIndex } from '../src/live/delivery-index.js'
import type { LiveEvent } from '../src/live/live-event.js'
import { matchesFilters } from '../src/store/store-contract.js'

const device = fc.constantFrom('d1', 'd2', 'd3', 'd4', 'd5')
const space = fc.constantFrom('s1', 's2', 's3')
const liveEvent = fc.record({ device: fc.option(device, { nil: undefined }), space }).map(({ device, space }): Omit<Message, 'message_id'> => ({
  message_code: 'C',
  message_category: 'alert',
  date_time: '2025-01-01T00:00:00.000Z',
  ...(device === undefined ? {} : { device_id: device }),
  space_id: space
}))
const selection = fc.record({ deviceIds: fc.uniqueArray(device, { maxLength: 3 }), spaceIds: fc.uniqueArray(space, { maxLength: 2 }) })
  .map(({ deviceIds, spaceIds }) => ({ deviceIds: new Set(deviceIds), spaceIds: new Set(spaceIds) }))

t.test('the events a filter can match, looked up by its entities, are those it matches of the whole delivery, in order, once', async (t) => {
  let narrowed = 0
  fc.assert(fc.property(
    fc.array(liveEvent, { maxLength: 40 }),
    fc.option(selection, { nil: undefined }),
    fc.option(selection, { nil: undefined }),
    (messages, entities, scope) => {
      const events: LiveEvent[] = messages.map((message, seq) => ({ seq, message: { message_id: `m-${seq}`, ...message }, json: '' }))
      const query = { startMs: 0, endMs: 0, entities, scope }
      const matching = (list: readonly LiveEvent[]) => list.filter((event) => matchesFilters(query, event.message)).map((event) => event.seq)
      const places = new DeliveryIndex(events).candidates(entities, scope)
      if (places === undefined) return
      const candidates = places.map((place) => events[place]!)
      narrowed++
      const seqs = candidates.map((event) => event.seq)
      if (seqs.some((seq, i) => i > 0 && seq <= seqs[i - 1]!)) throw new Error(`not in order, or twice: ${JSON.stringify(seqs)}`)
      if (JSON.stringify(matching(candidates)) !== JSON.stringify(matching(events))) throw new Error(`${JSON.stringify(matching(candidates))} against ${JSON.stringify(matching(events))}`)
    }), { numRuns: 5000 })
  t.ok(narrowed > 1000, `${narrowed} filters looked up by their entities`)
})

t.test('no entities, or as many as the delivery has events: every event is checked', async (t) => {
  const events: LiveEvent[] = [{ seq: 1, message: { message_id: 'a', message_code: 'C', message_category: 'alert', date_time: '2025-01-01T00:00:00.000Z', space_id: 's1' }, json: '' }]
  t.equal(new DeliveryIndex(events).candidates(undefined, undefined), undefined)
  t.equal(new DeliveryIndex(events).candidates({ deviceIds: new Set(['d1']), spaceIds: new Set() }, undefined), undefined)
  t.same(new DeliveryIndex([...events, { ...events[0]!, seq: 2 }]).candidates({ deviceIds: new Set(), spaceIds: new Set(['s1']) }, undefined), [0, 1])
})
