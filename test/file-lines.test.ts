import t from 'tap'
import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { forEachLine, forEachLineBackward, lineText, type LineEndFinder } from '../src/data/file-lines.js'

async function readlineLines (file: string): Promise<string[]> {
  const lines: string[] = []
  for await (const line of createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })) lines.push(line)
  return lines
}

async function chunkedLines (file: string, chunkBytes?: number, lineEnd?: LineEndFinder): Promise<Array<[string, number]>> {
  const lines: Array<[string, number]> = []
  await forEachLine(file, (line, bytes, start, end) => lines.push([lineText(bytes, start, end), line]), chunkBytes, 0, undefined, lineEnd)
  return lines
}

/**
 * A finder of the kind the memory store's loader has (it knows one form of line): the end of a
 * line of `a`s and `{}`s, read byte by byte up to a line break or the limit, -1 for any other.
 * A finder that ends a line at the limit, before its line break was read, must not cut it there.
 */
const knownFormEnd: LineEndFinder = (bytes, start, limit) => {
  let i = start
  while (i < limit && (bytes[i] === 0x61 || bytes[i] === 0x7b || bytes[i] === 0x7d)) i++
  return i === start ? -1 : i
}

const texts = [
  '{aa}\n{a}\r\n{}\rb\naa{\n\n{a}x\n{a}', 'aaaa\naaaa\naaaa\n',
  '', 'a', 'a\n', 'a\nb', '\n', '\n\n', 'a\r\nb\r\n', 'a\rb\r', '\r', '\r\n', '\r\n\r\n', 'x\r', 'a\r\r\nb',
  'é\nü\r\nz', '{"a":"ümlaut €"}\n{"b":2}', 'no end', '\uFEFF{"bom":1}\n', 'a\n\n\nb\n'
]

t.test('lines are cut exactly as node:readline cuts them (crlfDelay: Infinity), numbered from 1', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'file-lines-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'lines.txt')
  for (const text of texts) {
    await writeFile(file, text)
    const expected = await readlineLines(file)
    // Chunks of every size from 1 byte up: each line end and each multi-byte character falls on a boundary somewhere.
    for (const chunkBytes of [1, 2, 3, 4, 5, 7, undefined]) {
      for (const lineEnd of [undefined, knownFormEnd]) {
        const got = await chunkedLines(file, chunkBytes, lineEnd)
        t.same(got.map(([text]) => text), expected, `${JSON.stringify(text)} in chunks of ${chunkBytes ?? 'the default'}${lineEnd === undefined ? '' : ', lines of a known form ended by their finder'}`)
        t.same(got.map(([, line]) => line), expected.map((_, i) => i + 1))
      }
    }
  }
})

t.test('invalid UTF-8 is read as readline reads it (U+FFFD), also across chunks', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'file-lines-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'bad.txt')
  await writeFile(file, Buffer.from([0x61, 0xff, 0x0a, 0xe2, 0x82, 0x0a, 0xe2, 0x82, 0xac, 0x0d, 0x0a]))
  const expected = await readlineLines(file)
  for (const chunkBytes of [1, 2, 3, undefined]) {
    t.same((await chunkedLines(file, chunkBytes)).map(([text]) => text), expected)
  }
})

t.test('a long file in small chunks gives every line once, in order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'file-lines-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'long.txt')
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'x'.repeat(i % 97)}`)
  await writeFile(file, lines.join('\n') + '\n')
  t.same((await chunkedLines(file, 64)).map(([text]) => text), lines)
})

t.test('read back from the end: the whole lines readline gives, last first, without a last line that has no end', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'file-lines-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'lines.txt')
  const random = (() => { let seed = 7; return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32 })()
  const pieces = ['a', 'bc', 'é', '{"x":1}', '\n', '\r\n', '\r', '\n\n', '€']
  const generated = Array.from({ length: 300 }, () => Array.from({ length: Math.floor(random() * 30) }, () => pieces[Math.floor(random() * pieces.length)]).join(''))
  for (const text of [...texts, ...generated]) {
    await writeFile(file, text)
    const all = await readlineLines(file)
    const whole = /[\r\n]$/.test(text) ? all : all.slice(0, -1)
    for (const chunkBytes of [1, 2, 3, 5, 8, undefined]) {
      const back: string[] = []
      const bytes = await forEachLineBackward(file, (line) => { back.push(line); return true }, chunkBytes)
      t.same(back.reverse(), whole, `${JSON.stringify(text)} in chunks of ${chunkBytes ?? 'the default'}`)
      t.equal(bytes, Buffer.byteLength(text), 'went back over the whole file')
    }
  }
})

t.test('read back from the end: stops where its handler says, having read only the end', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'file-lines-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'long.txt')
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i}`)
  await writeFile(file, lines.join('\n') + '\ncut sho')
  const back: string[] = []
  const bytes = await forEachLineBackward(file, (line) => { back.push(line); return line !== 'line 4997' }, 64)
  t.same(back, ['line 4999', 'line 4998', 'line 4997'])
  t.equal(bytes, Buffer.byteLength('line 4997\nline 4998\nline 4999\ncut sho'), 'went back to the start of the line it stopped at')
})
