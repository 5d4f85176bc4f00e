import t from 'tap'
import { spawnSync } from 'node:child_process'
import { constants, crc32, deflateRawSync, gunzipSync } from 'node:zlib'
import { crc32Combine } from '../src/http/crc32-combine.js'
import { GzipSplicer, type DeflatedPiece } from '../src/http/gzip-splicer.js'

/** Deterministic bytes: text-like, so deflate finds repeats in it. */
function textOf (length: number, seed: number): Buffer {
  const bytes = Buffer.allocUnsafe(length)
  let state = seed
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    bytes[i] = 0x61 + ((state >>> 16) % 8)
  }
  return bytes
}

function pieceOf (text: Buffer): DeflatedPiece {
  return { deflated: deflateRawSync(text, { level: 9, finishFlush: constants.Z_SYNC_FLUSH }), crc: crc32(text), length: text.length }
}

t.test('crc32Combine: the CRC-32 of two pieces one after the other, as zlib computes it over both', async (t) => {
  for (const [a, b] of [[0, 0], [1, 0], [0, 1], [7, 13], [1000, 65_537], [70_000, 3]] as const) {
    const first = textOf(a, a + 1)
    const second = textOf(b, b + 2)
    t.equal(crc32Combine(crc32(first), crc32(second), b), crc32(Buffer.concat([first, second])), `${a} then ${b} bytes`)
  }
  const zeros = Buffer.alloc(20_000_000)
  t.equal(crc32Combine(crc32(Buffer.from('events')), crc32(zeros), zeros.length), crc32(Buffer.concat([Buffer.from('events'), zeros])), 'a long second piece')
})

/** Runs the splicer through the parts, text or piece, and returns its gzip bytes. */
async function spliced (parts: Array<{ text: Buffer } | { piece: Buffer }>): Promise<Buffer> {
  const splicer = new GzipSplicer()
  const out: Buffer[] = []
  for (const part of parts) {
    if ('text' in part) await splicer.text(part.text)
    else await splicer.piece(pieceOf(part.piece))
    out.push(...splicer.take())
  }
  await splicer.end()
  out.push(...splicer.take())
  return Buffer.concat(out)
}

t.test('GzipSplicer: text and pieces compressed ahead, in any order, make one gzip member of all of it', async (t) => {
  const a = textOf(100_000, 1)
  const b = textOf(50_000, 2)
  const c = textOf(3, 3)
  const cases: Array<[string, Array<{ text: Buffer } | { piece: Buffer }>]> = [
    ['nothing', []],
    ['text only', [{ text: a }, { text: b }]],
    ['a piece only', [{ piece: a }]],
    ['text, pieces, text', [{ text: c }, { piece: a }, { piece: b }, { text: c }]],
    ['piece, text, piece', [{ piece: b }, { text: a }, { piece: c }]],
    ['empty text and an empty piece', [{ text: Buffer.alloc(0) }, { piece: Buffer.alloc(0) }, { text: c }]]
  ]
  for (const [name, parts] of cases) {
    const gzip = await spliced(parts)
    const expected = Buffer.concat(parts.map((part) => 'text' in part ? part.text : part.piece))
    t.equal(gunzipSync(gzip).compare(expected), 0, `${name}: zlib decompresses it to the text`)
    // Another implementation than the one that wrote it: the system's gzip, which also checks the trailer.
    const system = spawnSync('gzip', ['-dc'], { input: gzip, maxBuffer: 1 << 24 })
    t.equal(system.status, 0, `${name}: gzip -d accepts it ${system.stderr?.toString() ?? ''}`)
    t.equal(system.stdout.compare(expected), 0, `${name}: gzip -d decompresses it to the text`)
  }
})

t.test('GzipSplicer: a wrong CRC in a piece is caught by the reader (the trailer is checked, not decorative)', async (t) => {
  const splicer = new GzipSplicer()
  const text = textOf(1000, 9)
  await splicer.piece({ ...pieceOf(text), crc: crc32(text) ^ 1 })
  await splicer.end()
  t.throws(() => gunzipSync(Buffer.concat(splicer.take())), /incorrect data check|checksum/i)
})

t.test('GzipSplicer: an answer abandoned while its region is open does not hand that stream to the next answer', async (t) => {
  const abandoned = new GzipSplicer()
  const pending = abandoned.text(textOf(200_000, 5))
  abandoned.destroy()
  await pending.catch(() => {})
  // The next answers take streams from those kept: each must be a working, fresh one.
  for (const seed of [6, 7]) {
    const text = textOf(50_000, seed)
    t.equal(gunzipSync(await spliced([{ text }, { piece: textOf(1000, seed) }, { text }])).compare(Buffer.concat([text, textOf(1000, seed), text])), 0, `answer ${seed - 5} after it`)
  }
})
