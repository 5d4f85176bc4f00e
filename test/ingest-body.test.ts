import t from 'tap'
import fc from 'fast-check'
import { parseEventLine } from '../src/data/event-lines.js'
import { jsonTextOf } from '../src/data/json-bytes.js'
import { WireEvent } from '../src/data/wire-line.js'
import { LINES_PER_TURN, MAX_LINE_BYTES, PARSED_BYTES_PER_TURN, ndjsonEvents, readIngestBody } from '../src/ingest/ingest-body.js'

/** What a test compares of a read line: its number and its problem, or its message. */
const outcome = (line: { line: number, problem?: string, event?: { message: unknown } }) => 'problem' in line ? { line: line.line, problem: line.problem } : { line: line.line, message: line.event!.message }

const eventText = fc.record({ id: fc.stringMatching(/^[a-z0-9-]{1,8}$/), device: fc.boolean() }).map(({ id, device }) => JSON.stringify({
  message_id: id,
  message_code: 'EMPTY',
  message_category: 'alert',
  date_time: '2025-03-01T10:00:00.000Z',
  ...(device ? { device_id: 'soap-001' } : {}),
  space_id: 'bldg-a/floor-1'
}))
const lineText = fc.oneof(
  { arbitrary: eventText, weight: 4 },
  fc.constantFrom('', ' ', '{}', 'x', '[1,2]', '"a,]"', '{"message_id":"a","message_id":"a"}', '{"a":[{"b":"]"}]}')
)
const ending = fc.constantFrom('\n', '\r\n', '\r')
const ws = fc.constantFrom('', ' ', '\n', '\t ')

t.test('an NDJSON body read in turns is read as at once, unless it has more lines than the limit (a line break at the end starts none)', async (t) => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.tuple(lineText, ending), { maxLength: 30 }),
    fc.boolean(),
    fc.integer({ min: 1, max: 32 }),
    async (lines, endsWithBreak, maxLines) => {
      let text = lines.map(([line, end]) => line + end).join('')
      if (!endsWithBreak && lines.length > 0) text = text.slice(0, -lines.at(-1)![1].length)
      const segments = text.split(/\r\n|\r|\n/)
      if (segments.at(-1) === '') segments.pop()
      const body = Buffer.from(text)
      let turns = 0
      const read = await readIngestBody(body, 'ndjson', maxLines, async () => { turns++ })
      if (segments.length > maxLines) {
        if (!('rejected' in read) || read.rejected !== 'payload_too_large') throw new Error(`${JSON.stringify(text)}: ${segments.length} lines over ${maxLines}, but ${JSON.stringify(read)}`)
        return
      }
      const atOnce = ndjsonEvents(body)
      const expected = atOnce === undefined ? { rejected: 'invalid_body' } : { lines: atOnce.map(outcome) }
      const got = 'rejected' in read ? read : { lines: read.lines.map(outcome) }
      if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${JSON.stringify(text)} (limit ${maxLines}): ${JSON.stringify(got)} against ${JSON.stringify(expected)}`)
      if (turns !== 0) throw new Error('a short body takes no turn')
    }), { numRuns: 3000 })
})

t.test('a JSON array body: its elements cut from the text, each read as a line, unless it has more elements than the limit', async (t) => {
  await fc.assert(fc.asyncProperty(
    fc.array(fc.tuple(ws, lineText.filter((line) => line.trim() !== '' && line !== 'x'), ws), { maxLength: 30 }),
    ws,
    fc.integer({ min: 1, max: 32 }),
    async (elements, inner, maxLines) => {
      const cuts = elements.map(([before, element, after]) => before + element + after)
      const text = `${inner}[${cuts.length === 0 ? inner : cuts.join(',')}]${inner}`
      const read = await readIngestBody(Buffer.from(text), 'json-array', maxLines, async () => {})
      const expected = cuts.length > maxLines
        ? { rejected: 'payload_too_large' }
        : { lines: cuts.map((cut, index) => outcome(parseEventLine(cut, index + 1) ?? { line: index + 1, problem: 'an empty element' })) }
      const got = 'rejected' in read ? read : { lines: read.lines.map(outcome) }
      if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${JSON.stringify(text)} (limit ${maxLines}): ${JSON.stringify(got)} against ${JSON.stringify(expected)}`)
    }), { numRuns: 3000 })
  for (const text of ['{"a":1}', '"[1]"', '[1,', '[1]x', ' ', '']) {
    t.same(await readIngestBody(Buffer.from(text), 'json-array', 10), { rejected: 'invalid_body' }, `${JSON.stringify(text)} is no JSON array`)
  }
})

t.test('a long body takes a turn every LINES_PER_TURN lines, and none after its last', async (t) => {
  const per = LINES_PER_TURN
  for (const [count, turns] of [[per, 0], [per + 1, 1], [2 * per, 1], [2 * per + 1, 2], [8 * per + 1, 8]] as const) {
    let taken = 0
    const read = await readIngestBody(Buffer.from('{}\n'.repeat(count)), 'ndjson', 100_000, async () => { taken++ })
    t.equal('lines' in read ? read.lines.length : -1, count)
    t.equal(taken, turns, `${count} lines: ${turns} turns`)
    taken = 0
    await readIngestBody(Buffer.from(`[${Array.from({ length: count }, () => '{}').join(',')}]`), 'json-array', 100_000, async () => { taken++ })
    t.equal(taken, turns, `${count} elements: ${turns} turns`)
  }
})

t.test('a JSON array body is read in turns too: an element that is not JSON, far into the body, is found only after the turns before it', async (t) => {
  // Before: the whole text was parsed, then cut, in one turn of the event loop (135–220 ms for 16 MiB).
  const per = LINES_PER_TURN
  for (const [bad, turns] of [[0, 0], [per - 1, 0], [per, 1], [4 * per + 71, 4], [30 * per, 30]] as const) {
    const elements = Array.from({ length: 40 * per }, (_, i) => i === bad ? '{"message_id":' : '{}')
    let taken = 0
    const read = await readIngestBody(Buffer.from(`[${elements.join(',')}]`), 'json-array', 100_000, async () => { taken++ })
    t.same(read, { rejected: 'invalid_body' }, `element ${bad + 1} is no JSON`)
    t.equal(taken, turns, `found after ${turns} turns`)
  }
})

t.test('a JSON array of elements in wire form is read from its bytes, as NDJSON lines are: each event a view of the body', async (t) => {
  const wire = (id: string) => `{"message_id":"${id}","message_code":"EMPTY","message_category":"alert","date_time":"2025-03-01T10:00:00.000Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}`
  const body = Buffer.from(`[${wire('a')},\n ${wire('b')} ,${wire('c')}]`)
  const read = await readIngestBody(body, 'json-array', 10)
  if (!('lines' in read)) throw new Error(JSON.stringify(read))
  t.same(read.lines.map((line) => 'json' in line ? [line.line, line.event instanceof WireEvent, line.json.bytes === body, jsonTextOf(line.json)] : line), [
    [1, true, true, wire('a')], [2, true, true, wire('b')], [3, true, true, wire('c')]
  ])
  t.same(read.lines.map((line) => 'event' in line ? line.event.epochMs : undefined), [Date.parse('2025-03-01T10:00:00.000Z'), Date.parse('2025-03-01T10:00:00.000Z'), Date.parse('2025-03-01T10:00:00.000Z')])
})

t.test('a JSON array body is refused as invalid_body exactly when JSON.parse would not take it as an array', async (t) => {
  // Texts of JSON's punctuation, near-whitespace and escapes, mostly almost arrays.
  const piece = fc.constantFrom('[', ']', '{', '}', ',', ':', '"', '\\', '"a"', '"\\""', '"]"', '"\\\\"', '1', ' ', '\n', '\t', '\r', '\u00a0', '\ufeff', '{}', '[]', '{"a":1}', 'é', 'null', '"x,y"')
  await fc.assert(fc.asyncProperty(
    fc.array(piece, { maxLength: 14 }), fc.boolean(),
    async (pieces, wrapped) => {
      const text = wrapped ? `[${pieces.join('')}]` : pieces.join('')
      let parsed: unknown
      try { parsed = JSON.parse(text) } catch {}
      const read = await readIngestBody(Buffer.from(text), 'json-array', 1000, async () => {})
      if (!Array.isArray(parsed)) {
        if (!('rejected' in read) || read.rejected !== 'invalid_body') throw new Error(`${JSON.stringify(text)} is no JSON array, but ${JSON.stringify(read)}`)
        return
      }
      if (!('lines' in read) || read.lines.length !== parsed.length) throw new Error(`${JSON.stringify(text)} is an array of ${parsed.length}, but ${JSON.stringify(read)}`)
    }), { numRuns: 20000 })
  // With pieces over MAX_LINE_BYTES, which are not parsed.
  const long = fc.constantFrom(`"${'a'.repeat(MAX_LINE_BYTES)}"`, 'x'.repeat(MAX_LINE_BYTES + 1), `{"k":[${'1,'.repeat(MAX_LINE_BYTES / 2)}1]}`, `{"k":[${'1,'.repeat(MAX_LINE_BYTES / 2)}1}]`)
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof({ arbitrary: piece, weight: 8 }, { arbitrary: long, weight: 1 }), { maxLength: 8 }), fc.boolean(),
    async (pieces, wrapped) => {
      const text = wrapped ? `[${pieces.join('')}]` : pieces.join('')
      let parsed: unknown
      try { parsed = JSON.parse(text) } catch {}
      const read = await readIngestBody(Buffer.from(text), 'json-array', 1000, async () => {})
      const refused = 'rejected' in read && read.rejected === 'invalid_body'
      if (refused !== !Array.isArray(parsed)) throw new Error(`${JSON.stringify(text.slice(0, 60))}…: JSON.parse ${Array.isArray(parsed) ? 'takes' : 'refuses'} it, but ${JSON.stringify(read).slice(0, 200)}`)
    }), { numRuns: 400 })
})

t.test('a line or element over MAX_LINE_BYTES is refused without being parsed; one at the bound is read', async (t) => {
  const event = (id: string, padding: number) => `{"message_id":"${id}",${' '.repeat(padding)}"message_code":"EMPTY","message_category":"alert","date_time":"2025-03-01T10:00:00.000Z","space_id":"bldg-a/floor-1"}`
  const atBound = event('at', 0)
  const fits = event('at', MAX_LINE_BYTES - atBound.length)
  const over = event('over', MAX_LINE_BYTES - atBound.length + 1)
  t.equal(Buffer.byteLength(fits), MAX_LINE_BYTES)
  const reason = `longer than ${MAX_LINE_BYTES} bytes, which no event is: not read`
  for (const [form, text] of [['ndjson', `${fits}\n${over}\n`], ['json-array', `[${fits},${over}]`]] as const) {
    const read = await readIngestBody(Buffer.from(text), form, 10)
    if (!('lines' in read)) throw new Error(JSON.stringify(read))
    t.same(read.lines.map(outcome), [
      { line: 1, message: { message_id: 'at', message_code: 'EMPTY', message_category: 'alert', date_time: '2025-03-01T10:00:00.000Z', space_id: 'bldg-a/floor-1' } },
      { line: 2, problem: reason }
    ], form)
  }
  // Not JSON at all is still told apart, however long: such a line is invalid JSON, and a body of
  // nothing else is not NDJSON; an array body is JSON only if its long element is.
  const noise = 'x'.repeat(MAX_LINE_BYTES + 1)
  t.same(await readIngestBody(Buffer.from(noise), 'ndjson', 10), { rejected: 'invalid_body' }, 'one long line of noise: not NDJSON at all')
  const read = await readIngestBody(Buffer.from(`${fits}\n${noise}\n`), 'ndjson', 10)
  t.same('lines' in read && read.lines.map(outcome)[1], { line: 2, problem: `invalid JSON (longer than ${MAX_LINE_BYTES} bytes, and not JSON)` }, 'a long line of noise among events')
  for (const text of [`[${noise}]`, `[{"a":"${noise}"]]`, `[{"a":1} {"b":"${noise}"}]`, `[${fits},"${noise}`]) {
    t.same(await readIngestBody(Buffer.from(text), 'json-array', 10), { rejected: 'invalid_body' }, `${text.slice(0, 12)}…: no JSON array`)
  }
})

t.test('lines read the thorough way take a turn every PARSED_BYTES_PER_TURN, however few they are', async (t) => {
  // 16 MiB of tiny nested values in 1,000 lines held the event loop 0.4–0.5 s in one turn.
  const line = `{"a":[${'{},'.repeat(Math.floor((MAX_LINE_BYTES - 10) / 3))}1]}`
  const count = Math.ceil(4 * PARSED_BYTES_PER_TURN / line.length)
  for (const [form, text] of [['ndjson', Array(count).fill(line).join('\n')], ['json-array', `[${Array(count).fill(line).join(',')}]`]] as const) {
    let turns = 0
    const read = await readIngestBody(Buffer.from(text), form, 100_000, async () => { turns++ })
    t.equal('lines' in read ? read.lines.length : -1, count, form)
    t.ok(turns >= 3 && turns <= 4, `${form}: ${count} lines of ${line.length} bytes, ${turns} turns`)
  }
})

t.test('ndjsonEvents reads the whole body at once, past PARSED_BYTES_PER_TURN', async (t) => {
  const line = `{"a":"${'x'.repeat(60_000)}"}`
  const count = Math.ceil(2 * PARSED_BYTES_PER_TURN / line.length) + 1
  t.equal(ndjsonEvents(Buffer.from(Array(count).fill(line).join('\n')))?.length, count)
})
