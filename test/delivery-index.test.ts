import t from 'tap'
import fc from 'fast-check'
import type { Message } from '../schemas/message.js'
import { DeliveryIndex } from '../src/live/delivery-index.js'
import type { LiveEvent } from '../src/live/live-event.js'
import { matchesFilters } from '../src/store/store-contract.js'

const device = fc.constantFrom('d1', 'd2', 'd3', 'd4', 'd5')
const space = fc.constantFrom('s1', 's2', 's3')
const code = fc.constantFrom('C1', 'C2', 'C3', 'C4')
const category = fc.constantFrom('alert' as const, 'notification' as const)
const liveEvent = fc.record({ device: fc.option(device, { nil: undefined }), space, code, category }).map(({ device, space, code, category }): Omit<Message, 'message_id'> => ({
  message_code: code,
  message_category: category,
  date_time: '2025-01-01T00:00:00.000Z',
  ...(device === undefined ? {} : { device_id: device }),
  space_id: space
}))
const selection = fc.record({ deviceIds: fc.uniqueArray(device, { maxLength: 3 }), spaceIds: fc.uniqueArray(space, { maxLength: 2 }) })
  .map(({ deviceIds, spaceIds }) => ({ deviceIds: new Set(deviceIds), spaceIds: new Set(spaceIds) }))

t.test('the events a filter can match, looked up by its entities, codes or category, are those it matches of the whole delivery, in order, once', async (t) => {
  let narrowed = 0
  fc.assert(fc.property(
    fc.array(liveEvent, { maxLength: 40 }),
    fc.option(selection, { nil: undefined }),
    fc.option(selection, { nil: undefined }),
    // At most one of them, as a stream's filter has.
    fc.oneof(fc.constant({}), fc.record({ category }), fc.record({ messageCodes: fc.uniqueArray(code, { maxLength: 3 }).map((codes) => new Set(codes)) })),
    (messages, entities, scope, exclusive) => {
      const events: LiveEvent[] = messages.map((message, seq) => ({ seq, message: { message_id: `m-${seq}`, ...message }, json: '' }))
      const query = { startMs: 0, endMs: 0, entities, scope, ...exclusive }
      const matching = (list: readonly LiveEvent[]) => list.filter((event) => matchesFilters(query, event.message)).map((event) => event.seq)
      const places = new DeliveryIndex(events).candidates({ entities, scope, ...exclusive })
      if (places === undefined) return
      const candidates = places.map((place) => events[place]!)
      narrowed++
      const seqs = candidates.map((event) => event.seq)
      if (seqs.some((seq, i) => i > 0 && seq <= seqs[i - 1]!)) throw new Error(`not in order, or twice: ${JSON.stringify(seqs)}`)
      if (JSON.stringify(matching(candidates)) !== JSON.stringify(matching(events))) throw new Error(`${JSON.stringify(matching(candidates))} against ${JSON.stringify(matching(events))}`)
    }), { numRuns: 5000 })
  t.ok(narrowed > 2000, `${narrowed} filters looked up`)
})

t.test('no entities or codes, or as many as the delivery has events: every event is checked', async (t) => {
  const events: LiveEvent[] = [{ seq: 1, message: { message_id: 'a', message_code: 'C', message_category: 'alert', date_time: '2025-01-01T00:00:00.000Z', space_id: 's1' }, json: '' }]
  t.equal(new DeliveryIndex(events).candidates({ entities: undefined }), undefined)
  t.equal(new DeliveryIndex(events).candidates({ entities: { deviceIds: new Set(['d1']), spaceIds: new Set() } }), undefined)
  t.equal(new DeliveryIndex(events).candidates({ entities: undefined, messageCodes: new Set(['C']) }), undefined)
  const other = { ...events[0]!, message: { ...events[0]!.message, space_id: 's2' } }
  t.same(new DeliveryIndex([...events, { ...events[0]!, seq: 2 }, other]).candidates({ entities: { deviceIds: new Set(), spaceIds: new Set(['s1']) } }), [0, 1])
  t.equal(new DeliveryIndex([...events, { ...events[0]!, seq: 2 }]).candidates({ entities: { deviceIds: new Set(), spaceIds: new Set(['s1']) } }), undefined, 'all of them: no narrower')
})

t.test('the fewest candidates of the filter\'s ways: by code when its codes are rarer than its entities\' events, by entity otherwise', async (t) => {
  const event = (i: number, code: string, space: string): LiveEvent => ({ seq: i, message: { message_id: `m-${i}`, message_code: code, message_category: code === 'RARE' ? 'notification' : 'alert', date_time: '2025-01-01T00:00:00.000Z', space_id: space }, json: '' })
  const events = Array.from({ length: 20 }, (_, i) => event(i, i % 10 === 3 ? 'RARE' : 'OFTEN', i < 10 ? 's1' : 's2'))
  const index = new DeliveryIndex(events)
  t.same(index.candidates({ entities: { deviceIds: new Set(), spaceIds: new Set(['s1']) }, messageCodes: new Set(['RARE']) }), [3, 13], 'two of the code against ten of the space')
  t.same(index.candidates({ entities: { deviceIds: new Set(), spaceIds: new Set(['s1']) }, messageCodes: new Set(['OFTEN']) }), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'ten of the space against eighteen of the code')
  t.same(index.candidates({ entities: undefined, category: 'notification' }), [3, 13], 'by category')
  t.same(index.candidates({ entities: undefined, messageCodes: new Set(['NONE']) }), [], 'a code no event has: none')
})
