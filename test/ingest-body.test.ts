import t from 'tap'
import fc from 'fast-check'
import { parseEventLine } from '../src/data/event-lines.js'
import { ndjsonEvents, readIngestBody } from '../src/ingest/ingest-body.js'

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

t.test('a long body takes a turn every 1,000 lines, and none after its last', async (t) => {
  for (const [count, turns] of [[1000, 0], [1001, 1], [2000, 1], [2500, 2]] as const) {
    let taken = 0
    const read = await readIngestBody(Buffer.from('{}\n'.repeat(count)), 'ndjson', 100_000, async () => { taken++ })
    t.equal('lines' in read ? read.lines.length : -1, count)
    t.equal(taken, turns, `${count} lines: ${turns} turns`)
    taken = 0
    await readIngestBody(Buffer.from(`[${Array.from({ length: count }, () => '{}').join(',')}]`), 'json-array', 100_000, async () => { taken++ })
    t.equal(taken, turns, `${count} elements: ${turns} turns`)
  }
})
