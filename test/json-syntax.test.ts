import t from 'tap'
import fc from 'fast-check'
import { isJsonText } from '../src/data/json-syntax.js'

const takes = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

t.test('isJsonText says what JSON.parse says, on JSON, on near-JSON and on noise', async (t) => {
  const token = fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\n', '\t', '\r', '\u00a0', '\ufeff', '\u0001', '"a"', '"\\"', '"\\u12G4"', '"\\u00e9"', '"\\x"', '"\\/"', '0', '01', '-', '-0', '1.', '.5', '1.5', '1e', '1e+', '1E-7', '-12', 'true', 'tru', 'false', 'null', 'nul', 'é', '"é"', 'x')
  await fc.assert(fc.property(fc.array(token, { maxLength: 12 }), (pieces) => {
    const text = pieces.join('')
    if (isJsonText(Buffer.from(text), 0, Buffer.byteLength(text)) !== takes(text)) throw new Error(`${JSON.stringify(text)}: JSON.parse ${String(takes(text))}`)
  }), { numRuns: 50000 })
  await fc.assert(fc.property(fc.jsonValue(), fc.nat(3), (value, spaces) => {
    const text = JSON.stringify(value, null, spaces)
    const bytes = Buffer.concat([Buffer.from('xx'), Buffer.from(text), Buffer.from('yy')])
    if (!isJsonText(bytes, 2, bytes.length - 2)) throw new Error(`${text} is JSON`)
    // One byte less is JSON only if JSON.parse says so.
    const cut = text.slice(0, -1)
    if (isJsonText(Buffer.from(cut), 0, Buffer.byteLength(cut)) !== takes(cut)) throw new Error(`${JSON.stringify(cut)}`)
  }), { numRuns: 5000 })
  t.ok(isJsonText(Buffer.from(`[${'{},'.repeat(100_000)}1]`), 0, 300_003), 'long and nested')
  t.notOk(isJsonText(Buffer.from('[{"a":1]}'), 0, 9), 'a bracket closing what it did not open')
})
