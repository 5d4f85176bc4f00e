/**
 * The CRC-32 of two pieces of data one after the other, from each piece's own CRC-32 and the
 * second's length, without reading either again: zlib's crc32_combine (its multiply-by-x^n
 * modulo the polynomial form, from zlib 1.2.12), which Node's zlib does not expose. A gzip
 * answer spliced from compressed pieces kept apart (deflated-blocks.ts) needs its trailer's
 * CRC-32 over the whole, and reading 19 MB again for it would cost what the splicing saves.
 */

/** CRC-32's polynomial, reflected. */
const POLYNOMIAL = 0xedb88320

/** a(x) * b(x) modulo the polynomial, both reflected (bit 31 is x^0). */
function multiplyModulo (a: number, b: number): number {
  let product = 0
  for (let bit = 0x80000000; bit !== 0; bit >>>= 1) {
    if ((a & bit) !== 0) {
      product ^= b
      if ((a & (bit - 1)) === 0) break
    }
    b = (b & 1) !== 0 ? (b >>> 1) ^ POLYNOMIAL : b >>> 1
  }
  return product >>> 0
}

/** x^(2^k) modulo the polynomial, for k from 0 to 31. */
const POWERS_OF_X = (() => {
  const powers = new Array<number>(32)
  let power = 0x40000000 // x^1
  powers[0] = power
  for (let k = 1; k < 32; k++) {
    power = multiplyModulo(power, power)
    powers[k] = power
  }
  return powers
})()

/** x^(n * 2^k) modulo the polynomial. */
function powerOfX (n: number, k: number): number {
  let power = 0x80000000 // x^0
  while (n > 0) {
    if (n % 2 === 1) power = multiplyModulo(POWERS_OF_X[k & 31]!, power)
    n = Math.floor(n / 2)
    k++
  }
  return power
}

/** The CRC-32 of A followed by B, given crc32(A), crc32(B) and B's length in bytes. */
export function crc32Combine (crcA: number, crcB: number, lengthB: number): number {
  // Appending lengthB bytes of zeros to A multiplies its CRC by x^(8 * lengthB).
  return (multiplyModulo(powerOfX(lengthB, 3), crcA >>> 0) ^ crcB) >>> 0
}
