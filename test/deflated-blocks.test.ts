import t from 'tap'
import { constants, crc32, inflateRawSync } from 'node:zlib'
import { BLOCKS_MADE_AT_ONCE, DeflatedBlocks } from '../src/events/deflated-blocks.js'

/** A piece's text: it has no final block, so the reader stops at its last flush. */
function inflated (deflated: Buffer): Buffer {
  return inflateRawSync(deflated, { finishFlush: constants.Z_SYNC_FLUSH })
}

/** A store's encoded buffer: `count` events' JSON one after the other, with their offsets. */
function encoded (count: number, tag: string): { bytes: Buffer, offsets: Uint32Array, texts: string[] } {
  const texts = Array.from({ length: count }, (_, i) => JSON.stringify({ message_id: `${tag}-${i}`, n: i }))
  const offsets = new Uint32Array(count + 1)
  for (let i = 0; i < count; i++) offsets[i + 1] = offsets[i]! + Buffer.byteLength(texts[i]!)
  return { bytes: Buffer.from(texts.join('')), offsets, texts }
}

t.test('a block is its events each after a comma, deflated to stand alone, with its text\'s CRC and length', async (t) => {
  const blocks = new DeflatedBlocks(8)
  const { bytes, offsets, texts } = encoded(20, 'a')
  const piece = await blocks.block(bytes, offsets, 1)!
  const text = ',' + texts.slice(8, 16).join(',')
  t.equal(inflated(piece.deflated).toString(), text)
  t.equal(piece.crc, crc32(text))
  t.equal(piece.length, Buffer.byteLength(text))
  t.same(piece.deflated.subarray(-4), Buffer.from([0, 0, 0xff, 0xff]), 'ends in a sync flush: byte-aligned, no final block')
})

t.test('kept: asked again, the same piece; another buffer or other offsets, another block', async (t) => {
  const blocks = new DeflatedBlocks(8)
  const first = encoded(16, 'a')
  const piece = await blocks.block(first.bytes, first.offsets, 0)!
  t.equal(await blocks.block(first.bytes, first.offsets, 0)!, piece, 'the kept one')
  t.equal(blocks.count, 1)
  t.equal(blocks.bytes, piece.deflated.length)

  const second = encoded(16, 'b')
  const other = await blocks.block(second.bytes, second.offsets, 0)!
  t.match(inflated(other.deflated).toString(), /^,\{"message_id":"b-0"/, 'its own buffer\'s events')
  t.equal(blocks.count, 2)

  // The same buffer read with other offsets (events of other lengths): not the kept text.
  const shifted = new Uint32Array(first.offsets)
  for (let i = 1; i < shifted.length; i++) shifted[i] = shifted[i]! - 1
  shifted[0] = 0
  const remade = await blocks.block(first.bytes, shifted, 0)!
  t.not(remade, piece)
  t.equal(inflated(remade.deflated).length, remade.length)
  t.equal(blocks.made, 3)
})

t.test('at most maxBytes kept: the block used longest ago goes first', async (t) => {
  const { bytes, offsets } = encoded(64, 'a')
  const one = await new DeflatedBlocks(8).block(bytes, offsets, 0)!
  const blocks = new DeflatedBlocks(8, Math.floor(one.deflated.length * 2.5))
  const zero = await blocks.block(bytes, offsets, 0)!
  await blocks.block(bytes, offsets, 1)!
  t.equal(await blocks.block(bytes, offsets, 0)!, zero, 'used again: now the most recent')
  await blocks.block(bytes, offsets, 2)!
  t.equal(blocks.count, 2, 'one dropped')
  t.ok(blocks.bytes <= one.deflated.length * 2.5)
  t.equal(await blocks.block(bytes, offsets, 0)!, zero, 'the recently used one stayed')
  const made = blocks.made
  await blocks.block(bytes, offsets, 1)!
  t.equal(blocks.made, made + 1, 'the dropped one made again')
  t.equal(blocks.count, 2)
})

t.test('concurrent askers of a block share its making', async (t) => {
  const blocks = new DeflatedBlocks(8)
  const { bytes, offsets } = encoded(16, 'a')
  const [a, b] = await Promise.all([blocks.block(bytes, offsets, 0)!, blocks.block(bytes, offsets, 0)!])
  t.equal(a, b)
  t.equal(blocks.count, 1)
})

t.test('known by where bytes and offsets are stored: new views of the same memory find the block; other offsets in the same places do not', async (t) => {
  const blocks = new DeflatedBlocks(8)
  const { bytes, offsets } = encoded(32, 'a')
  const piece = await blocks.block(bytes, offsets, 1)!
  // What each ingest hands over for the memory store's last segment: new views of its room.
  t.equal(await blocks.block(bytes.subarray(0), offsets.subarray(0, 25), 1)!, piece, 'the kept one')
  t.equal(blocks.made, 1)
  // The same first and last offsets of block 1, other ones between them: another text.
  const moved = new Uint32Array(offsets)
  moved[12] = moved[12]! + 1
  const other = await blocks.block(bytes, moved, 1)!
  t.not(other, piece)
  t.equal(blocks.made, 2)
  t.not(inflated(other.deflated).toString(), inflated(piece.deflated).toString())
})

t.test('at most BLOCKS_MADE_AT_ONCE made at once; past it, undefined (compressed as it goes by the caller)', async (t) => {
  const waiting: Array<() => void> = []
  const slow = async (text: Buffer): Promise<Buffer> => {
    await new Promise<void>((resolve) => waiting.push(resolve))
    return text
  }
  const blocks = new DeflatedBlocks(8, 1 << 20, slow)
  const { bytes, offsets } = encoded(64, 'a')
  const making = Array.from({ length: BLOCKS_MADE_AT_ONCE }, (_, n) => blocks.block(bytes, offsets, n))
  t.ok(making.every((piece) => piece !== undefined))
  t.equal(blocks.block(bytes, offsets, BLOCKS_MADE_AT_ONCE), undefined, 'one more: not now')
  t.equal(blocks.block(bytes, offsets, 0), making[0], 'one being made is shared')
  for (const resolve of waiting.splice(0)) resolve()
  await Promise.all(making)
  const next = blocks.block(bytes, offsets, BLOCKS_MADE_AT_ONCE)
  t.not(next, undefined, 'made once the others are')
  waiting.splice(0).forEach((resolve) => { resolve() })
  await next
})

t.test('a block whose compression fails is not kept: the asker gets the error, the next one tries again', async (t) => {
  let fail = true
  const blocks = new DeflatedBlocks(8, 1 << 20, async (text) => {
    if (fail) throw new Error('zlib broke')
    return text
  })
  const { bytes, offsets } = encoded(16, 'a')
  await t.rejects(blocks.block(bytes, offsets, 0)!, { message: 'zlib broke' })
  t.equal(blocks.count, 0)
  fail = false
  t.equal((await blocks.block(bytes, offsets, 0)!).length, offsets[8]! + 8)
  t.equal(blocks.count, 1)
})
