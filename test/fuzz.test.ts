import t from 'tap'
import fc from 'fast-check'
import { ErrorCode, type ErrorCodeName } from '../schemas/error.js'
import { build, TOKEN } from './helper.js'

const EVENTS = '/svc/v2/events'
const SPECIFICATIONS = '/svc/v2/event_specifications'
const eventNames = ['start_date', 'end_date', 'device_ids', 'space_ids', 'tag_ids', 'message_ids', 'message_category', 'message_codes']
const specificationNames = ['message_codes', 'languages']

/** What each endpoint may answer, and nothing else. */
const allowed: Record<string, Set<ErrorCodeName>> = {
  [EVENTS]: new Set(['unauthorized_request', 'invalid_parameter', 'duplicate_parameter', 'missing_parameter', 'invalid_parameter_combination', 'invalid_start_date', 'invalid_end_date']),
  [SPECIFICATIONS]: new Set(['unauthorized_request', 'invalid_parameter', 'duplicate_parameter'])
}

/** Percent-encodes some characters and leaves others raw, as clients do. */
const encoded = (text: string, style: number) => {
  if (style === 0) return encodeURIComponent(text)
  if (style === 1) return text.replace(/[&#%\s]/g, (c) => encodeURIComponent(c))
  return text.replace(/ /g, '+').replace(/[&#]/g, (c) => encodeURIComponent(c))
}

const dateText = fc.oneof(
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 25 }), fc.constantFrom('Z', '+01:00', '-23:59', '+24:00', ' 05:30', ''))
    .map(([y, m, d, h, z]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}T${String(h).padStart(2, '0')}:00:00${z}`),
  fc.string({ maxLength: 40 })
)

const value = fc.oneof(
  dateText,
  fc.constantFrom('alert', 'notification', 'ALERT', '', ',', ' , ', 'soap-001', 'soap-001,nope', 'floor-1', 'LOW_LEVEL', 'fra,deu', '%', '%ZZ', '\u0000'),
  fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 5 }).map((items) => items.join(',')),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ maxLength: 2000 })
)

const parameter = (names: string[]) => fc.record({
  name: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...names) }, fc.string({ maxLength: 12 }), fc.constantFrom('Start_Date', 'start_date[]', '', 'languages', 'device_ids ')),
  value: fc.option(value, { nil: undefined }),
  style: fc.integer({ min: 0, max: 2 })
})

/** Mostly well-formed: known names, each once, and for events a start_date that may well be valid. */
const plausibleParameters = (names: string[]) => fc.tuple(
  fc.uniqueArray(fc.record({ name: fc.constantFrom(...names), value: fc.option(value, { nil: undefined }), style: fc.integer({ min: 0, max: 2 }) }), { selector: (p) => p.name, maxLength: 4 }),
  fc.option(fc.record({ name: fc.constant('start_date'), value: dateText, style: fc.integer({ min: 0, max: 2 }) }), { nil: undefined })
).map(([parameters, start]) => start === undefined || !names.includes('start_date') ? parameters : [start, ...parameters.filter((p) => p.name !== 'start_date')])

const request = (path: string, names: string[]) => fc.record({
  parameters: fc.oneof(fc.array(parameter(names), { maxLength: 10 }), plausibleParameters(names)),
  authorization: fc.oneof({ weight: 8, arbitrary: fc.constant(`Bearer ${TOKEN}`) }, fc.constant(undefined), fc.string({ maxLength: 30 })),
  separators: fc.constantFrom('&', '&&')
}).map(({ parameters, authorization, separators }) => {
  const query = parameters.map(({ name, value, style }) => value === undefined ? encoded(name, style) : `${encoded(name, style)}=${encoded(value, style)}`).join(separators)
  return { url: query === '' ? path : `${path}?${query}`, authorization }
})

t.test('random requests get only documented answers, never a 5xx', async (t) => {
  const app = await build(t)
  for (const [path, names] of [[EVENTS, eventNames], [SPECIFICATIONS, specificationNames]] as const) {
    await t.test(path, async (t) => {
      const counts = new Map<number, number>()
      await fc.assert(fc.asyncProperty(request(path, names), async ({ url, authorization }) => {
        const response = await app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } })
        counts.set(response.statusCode, (counts.get(response.statusCode) ?? 0) + 1)
        if (response.statusCode === 200) {
          const body = response.json()
          return Array.isArray(body.data) && Array.isArray(body.errors)
        }
        const body = response.json()
        return allowed[path]!.has(body.message) && ErrorCode[body.message as ErrorCodeName] === response.statusCode && body.status === response.statusCode
      }), { numRuns: 1500 })
      t.ok(counts.get(200), 'some requests succeeded')
      t.ok(counts.get(400), 'some requests were refused')
      t.notOk([...counts.keys()].some((status) => status >= 500), 'never a 5xx')
      t.comment(JSON.stringify(Object.fromEntries(counts)))
    })
  }
})
