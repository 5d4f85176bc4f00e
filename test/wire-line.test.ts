import t from 'tap'
import fc from 'fast-check'
import type { Message } from '../schemas/message.js'
import { parseEventLine, type EventLine } from '../src/data/event-lines.js'
import { internedCount } from '../src/data/intern.js'
import { jsonTextOf } from '../src/data/json-bytes.js'
import { MAX_REMEMBERED, scanWireLine, WireEvent } from '../src/data/wire-line.js'
import { ndjsonEvents } from '../src/ingest/ingest-body.js'
import { encodeMessage } from '../src/store/message-json.js'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../src/time/rfc3339.js'

/** The reference: the general way (JSON.parse, the schema, the wire form), which every line may take. */
function general (line: string): { message: Message, epochMs: number, json: string } | undefined {
  const parsed = parseEventLine(line, 1)
  return parsed === undefined || 'problem' in parsed ? undefined : { message: parsed.event.message, epochMs: parsed.event.epochMs, json: jsonTextOf(parsed.json) }
}

function scan (line: string): ReturnType<typeof scanWireLine> {
  // Inside a larger buffer, as a body or a file chunk holds it.
  const bytes = Buffer.from(`x\n${line}\ny`)
  return scanWireLine(bytes, 2, bytes.length - 2)
}

/** Whether the scan must take a wire line: printable ASCII without escapes (anything else is left to the general way). */
const isPlain = (text: string) => /^[\x20-\x7e]*$/.test(text) && !text.includes('\\')

const identifierChars = fc.constantFrom('a', 'Z', '0', '-', '_', '.', ' ', ',', '"', '\\', '/', '\u0001', '\u007f', '\u0085', 'é', '€', '\t', ':', '{', '}')
const identifier = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), weight: 12 },
  fc.array(identifierChars, { minLength: 0, maxLength: 8 }).map((chars) => chars.join('')),
  fc.constantFrom('x'.repeat(1024), 'x'.repeat(1025), ' x', 'x ', '')
)
const time = fc.oneof(
  fc.integer({ min: EVENT_TIME_MIN_MS - 86_400_000, max: EVENT_TIME_MAX_MS + 86_400_000 }),
  fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) })
).map((ms) => { try { return new Date(ms).toISOString() } catch { return 'not a date' } })
const dateTime = fc.oneof({ arbitrary: time, weight: 4 }, fc.constantFrom(
  '2026-02-29T10:00:00.000Z', '2028-02-29T10:00:00.000Z', '2026-13-01T10:00:00.000Z', '2026-04-31T10:00:00.000Z',
  '2026-11-20T24:00:00.000Z', '2026-11-20T10:60:00.000Z', '2026-11-20t10:00:00.000Z', '2026-11-20T10:00:00.000z',
  '2026-11-20T10:00:00.000+00:00', '2026-11-20T10:00:00Z', '1677-12-31T23:59:59.999Z', '2262-01-01T00:00:00.000Z',
  '2026-11-20T10:00:00.0a0Z', '0099-01-01T00:00:00.000Z', '2026-11-20 10:00:00.000Z'))
const message = fc.record({
  message_id: identifier,
  message_code: identifier,
  message_category: fc.constantFrom('alert', 'notification', 'alert', 'notification', 'alert', 'notification', 'Alert', 'warning'),
  date_time: dateTime,
  device_id: fc.option(identifier, { nil: undefined }),
  space_id: identifier
}).map((record) => {
  const wire: Record<string, string> = { message_id: record.message_id, message_code: record.message_code, message_category: record.message_category, date_time: record.date_time }
  if (record.device_id !== undefined) wire.device_id = record.device_id
  wire.space_id = record.space_id
  return wire
})
/** A line: the record's JSON, sometimes changed by a character, in another key order or with spaces. */
const line = fc.tuple(message, fc.nat(), fc.constantFrom('none', 'none', 'none', 'none', 'insert', 'delete', 'replace', 'reorder', 'space'), fc.constantFrom(' ', '"', '\\', ',', '}', '\n', 'a', '1', 'é'))
  .map(([record, at, change, char]) => {
    const text = JSON.stringify(record)
    const i = at % (text.length + 1)
    switch (change) {
      case 'insert': return text.slice(0, i) + char + text.slice(i)
      case 'delete': return text.slice(0, i) + text.slice(i + 1)
      case 'replace': return text.slice(0, i) + char + text.slice(i + 1)
      case 'reorder': return JSON.stringify(Object.fromEntries(Object.entries(record).reverse()))
      case 'space': return JSON.stringify(record, null, 1)
      default: return text
    }
  })

t.test('a line the scan reads is read the same by the general way, as the same message and the same JSON', async (t) => {
  let taken = 0
  fc.assert(fc.property(line, (text) => {
    const scanned = scan(text)
    const reference = general(text)
    if (scanned !== undefined) {
      taken++
      if (reference === undefined) throw new Error(`scanned, but the general way refuses: ${text}`)
      // What the scan read without making the message: the same entities and message_id.
      if (scanned.device_id !== reference.message.device_id || scanned.space_id !== reference.message.space_id || scanned.messageId !== reference.message.message_id) {
        throw new Error(`other entities or ID read by the scan: ${text}`)
      }
      // Same fields, same order, same time, and the line is its own wire JSON.
      if (JSON.stringify(scanned.message) !== JSON.stringify(reference.message) || Object.keys(scanned.message).join() !== Object.keys(reference.message).join()) {
        throw new Error(`another message: ${JSON.stringify(scanned.message)} against ${JSON.stringify(reference.message)}`)
      }
      if (scanned.epochMs !== reference.epochMs) throw new Error(`another time: ${scanned.epochMs} against ${reference.epochMs} for ${text}`)
      if (reference.json !== text) throw new Error(`not the wire JSON: ${text}`)
    } else if (reference !== undefined && reference.json === text && isPlain(text)) {
      throw new Error(`a plain wire line the scan left to the general way: ${text}`)
    }
  }), { numRuns: 20_000 })
  t.ok(taken > 2000, `${taken} of 20,000 lines taken by the scan`)
})

t.test('an NDJSON body is read line by line as splitting it at its line breaks reads it, whatever ends its lines (the scan finds a wire line\'s end itself)', async (t) => {
  const ending = fc.constantFrom('\n', '\n', '\n', '\r\n', '\r', '\r\r\n', '\n\n', ' \n', '}\n', 'x\r\n')
  const body = fc.tuple(fc.array(fc.tuple(line, ending), { minLength: 1, maxLength: 8 }), fc.boolean()).map(([lines, endsWithBreak]) => {
    const text = lines.map(([text, end]) => text + end).join('')
    return endsWithBreak ? text : text.replace(/(\r\n|\n|\r)$/, '')
  })
  /** What a line gives: its number, and its problem or its message and JSON. */
  const outcome = (parsed: EventLine) => 'problem' in parsed
    ? { line: parsed.line, problem: parsed.problem }
    : { line: parsed.line, message: JSON.stringify(parsed.event.message), json: jsonTextOf(parsed.json) }
  let wire = 0
  fc.assert(fc.property(body, (text) => {
    const reference = text.split(/\r\n|\n|\r/).flatMap((lineText, i) => {
      const parsed = parseEventLine(lineText, i + 1)
      return parsed === undefined ? [] : [outcome(parsed)]
    })
    const read = ndjsonEvents(Buffer.from(text))
    if (read === undefined) {
      if (!reference.every((r) => typeof r.problem === 'string' && r.problem.startsWith('invalid JSON'))) throw new Error(`refused whole, but it has JSON: ${JSON.stringify(text)}`)
      return
    }
    wire += read.filter((parsed) => parsed instanceof WireEvent).length
    const got = read.map(outcome)
    if (JSON.stringify(got) !== JSON.stringify(reference)) throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(got)} against ${JSON.stringify(reference)}`)
  }), { numRuns: 5000 })
  t.ok(wire > 2000, `${wire} lines read by the scan`)
})

t.test('the scan takes the wire lines of ordinary events, and its identifiers are the interned strings', async (t) => {
  const event: Message = { message_id: 'm-1', message_code: 'C1', message_category: 'alert', date_time: '2026-11-20T10:00:00.000Z', device_id: 'dev-1', space_id: 'room-1' }
  const first = scan(encodeMessage(event))
  const second = scan(encodeMessage({ ...event, message_id: 'm-2' }))
  t.same({ message: first?.message, epochMs: first?.epochMs }, { message: event, epochMs: Date.UTC(2026, 10, 20, 10) })
  t.equal(second?.message.device_id, first?.message.device_id)
  t.equal(second?.device_id, first?.message.device_id, 'the device read by the scan is the message\'s interned string')
  t.equal(first?.messageId, 'm-1')
  const ofSpace: Message = { message_id: 'm-3', message_code: 'C1', message_category: 'notification', date_time: '2024-02-29T23:59:59.999Z', space_id: 'room-1' }
  const spaceEvent = scan(encodeMessage(ofSpace))
  t.same({ message: spaceEvent?.message, epochMs: spaceEvent?.epochMs, device: spaceEvent?.device_id, space: spaceEvent?.space_id }, { message: ofSpace, epochMs: Date.UTC(2024, 1, 29, 23, 59, 59, 999), device: undefined, space: 'room-1' })
  t.equal(spaceEvent?.message, spaceEvent?.message, 'the message is made once, then kept')
  t.equal(jsonTextOf(spaceEvent!), encodeMessage(ofSpace), 'the event is its own wire JSON: the line')
  t.equal(scan(encodeMessage(event) + ' '), undefined, 'a trailing space: the general way')
  t.equal(scan(encodeMessage(event).slice(0, -1)), undefined, 'cut short')
  t.equal(scan(''), undefined)
})

t.test('a flood of new identifiers: each read as itself, and the memory kept for them stays bounded', async (t) => {
  const before = internedCount()
  const ids = Array.from({ length: MAX_REMEMBERED + 10_000 }, (_, i) => `flood-device-${i}`)
  let wrong = 0
  // Twice: the second time, the first 65,536 (less what earlier tests left) are remembered.
  for (const round of [1, 2]) {
    for (const [i, id] of ids.entries()) {
      const scanned = scan(encodeMessage({ message_id: `m${round}-${i}`, message_code: 'C', message_category: 'alert', date_time: '2026-11-20T10:00:00.000Z', device_id: id, space_id: 's' }))
      if (scanned?.message.device_id !== id) wrong++
    }
  }
  t.equal(wrong, 0)
  // A hostile ingest of new device IDs (refused as unknown) must not intern each one for good.
  t.ok(internedCount() - before <= MAX_REMEMBERED, `${internedCount() - before} strings interned for ${ids.length} new IDs`)
  const long = 'x'.repeat(600)
  t.equal(scan(encodeMessage({ message_id: 'm', message_code: 'C', message_category: 'alert', date_time: '2026-11-20T10:00:00.000Z', space_id: long }))?.message.space_id, long, 'an identifier too long to remember is read all the same')
})

t.test('the scan\'s hash of a message_id, finished, is the memory store\'s hash of its string', async (t) => {
  const { messageIdHash, messageIdHashOfFnv } = await import('../src/store/memory/message-id-table.js')
  fc.assert(fc.property(fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,40}[\x21-\x7e])?$/).filter((id) => !/["\\,]/.test(id)), (id) => {
    const event = scan(encodeMessage({ message_id: id, message_code: 'C', message_category: 'alert', date_time: '2026-11-20T10:00:00.000Z', space_id: 's' }))
    return event !== undefined && messageIdHashOfFnv(event.idFnv) === messageIdHash(id)
  }), { numRuns: 2000 })
})
