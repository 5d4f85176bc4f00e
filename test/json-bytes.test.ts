import t from 'tap'
import fc from 'fast-check'
import { copyJsonBytes, joinJsonBytes, jsonBytesOf, jsonTextOf, type JsonBytes } from '../src/data/json-bytes.js'

/** The texts as views into one body, one per line, as an NDJSON body's events are (with a CR before some line breaks). */
function viewsOf (texts: readonly string[], crs: readonly boolean[]): JsonBytes[] {
  const body = Buffer.from(texts.map((text, i) => text + (crs[i] === true ? '\r\n' : '\n')).join(''))
  const views: JsonBytes[] = []
  let start = 0
  for (let i = 0; i < texts.length; i++) {
    const end = start + Buffer.byteLength(texts[i]!)
    views.push({ bytes: body, start, end })
    start = end + (crs[i] === true ? 2 : 1)
  }
  return views
}

const text = fc.string({ unit: fc.constantFrom('a', 'b', '{', '"', 'é', '€', '😀', '\r') })

t.test('pieces joined into one buffer: the same bytes as Buffer.from of their texts joined, with their offsets', async (t) => {
  fc.assert(fc.property(fc.array(text), fc.array(fc.boolean()), fc.boolean(), (texts, crs, lineBreaks) => {
    const { bytes, offsets } = joinJsonBytes(viewsOf(texts, crs), lineBreaks)
    const expected = Buffer.from(texts.map((text) => lineBreaks ? text + '\n' : text).join(''))
    if (!bytes.equals(expected) || offsets.length !== texts.length + 1 || offsets[0] !== 0) return false
    return texts.every((text, i) => bytes.subarray(offsets[i], offsets[i + 1]).equals(Buffer.from(lineBreaks ? text + '\n' : text)))
  }), { numRuns: 2000 })
  t.same(joinJsonBytes([], true).bytes.length, 0)
})

t.test('pieces joined into a buffer kept from one call to the next: the same bytes, whatever the buffer held, and a view of it when it is large enough', async (t) => {
  let kept: Buffer | undefined
  fc.assert(fc.property(fc.array(text, { maxLength: 20 }), fc.boolean(), (texts, lineBreaks) => {
    const { bytes, offsets } = joinJsonBytes(viewsOf(texts, []), lineBreaks, kept)
    const expected = Buffer.from(texts.map((text) => lineBreaks ? text + '\n' : text).join(''))
    const inKept = kept !== undefined && expected.length <= kept.length
    if (inKept && bytes.buffer !== kept!.buffer) return false
    kept ??= Buffer.alloc(64, 0xff)
    return bytes.equals(expected) && offsets[texts.length] === expected.length
  }), { numRuns: 2000 })
})

t.test('a text and its bytes make each other; a copy lands where it is told and says where it ends', async (t) => {
  const json = jsonBytesOf('{"message_id":"é😀"}')
  t.equal(jsonTextOf(json), '{"message_id":"é😀"}')
  t.equal(json.end, Buffer.byteLength('{"message_id":"é😀"}'))
  const [view] = viewsOf(['x', '"é"'], []).slice(1)
  t.equal(jsonTextOf(view!), '"é"')
  const target = Buffer.alloc(8, 0x2e)
  t.equal(copyJsonBytes(view!, target, 2), 2 + 4)
  t.equal(target.toString(), '..\u0022é\u0022..')
})

t.test('lines of bodies joined with their line breaks, some left out, from two bodies in turn: the same as each piece copied alone', async (t) => {
  fc.assert(fc.property(fc.array(fc.tuple(text, fc.boolean(), fc.boolean(), fc.boolean())), fc.array(text, { maxLength: 5 }), (lines, others) => {
    // A body's lines, those kept (the others refused), now and then a line of another body between.
    const views = viewsOf(lines.map(([line]) => line), lines.map(([, cr]) => cr))
    const other = viewsOf(others, [])
    const pieces: JsonBytes[] = []
    lines.forEach(([, , kept, interleave], i) => {
      if (interleave && other.length > 0) pieces.push(other[i % other.length]!)
      if (kept) pieces.push(views[i]!)
    })
    const { bytes, offsets } = joinJsonBytes(pieces, true, Buffer.alloc(64, 0x7e))
    const expected = Buffer.concat(pieces.map((piece) => Buffer.concat([piece.bytes.subarray(piece.start, piece.end), Buffer.from('\n')])))
    return bytes.equals(expected) && pieces.every((piece, i) => bytes.subarray(offsets[i], offsets[i + 1]).equals(Buffer.concat([piece.bytes.subarray(piece.start, piece.end), Buffer.from('\n')])))
  }), { numRuns: 3000 })
})
