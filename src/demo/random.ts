/**
 * A small seeded pseudo-random generator (sfc32, seeded through splitmix32), so the same seed
 * gives the same data set on every machine and Node version. Math.random cannot be seeded.
 */
export class Random {
  #a: number
  #b: number
  #c: number
  #d: number

  /** A generator for one purpose (`layout`, `events`, …): streams with other labels stay independent of it. */
  static stream (seed: number, label: string): Random {
    let state = hashLabel(label) ^ (seed >>> 0)
    state = splitmix32(state).state ^ Math.floor(seed / 2 ** 32)
    const words: number[] = []
    for (let i = 0; i < 4; i++) {
      const step = splitmix32(state)
      state = step.state
      words.push(step.value)
    }
    return new Random(words[0]!, words[1]!, words[2]!, words[3]!)
  }

  private constructor (a: number, b: number, c: number, d: number) {
    this.#a = a
    this.#b = b
    this.#c = c
    this.#d = d
    // The first outputs still show the seed's structure.
    for (let i = 0; i < 12; i++) this.uint32()
  }

  uint32 (): number {
    const a = this.#a
    const b = this.#b
    const c = this.#c
    const t = (((a + b) | 0) + this.#d) | 0
    this.#d = (this.#d + 1) | 0
    this.#a = b ^ (b >>> 9)
    this.#b = (c + (c << 3)) | 0
    this.#c = (((c << 21) | (c >>> 11)) + t) | 0
    return t >>> 0
  }

  /** Uniform in [0, 1). */
  float (): number {
    return this.uint32() / 4294967296
  }

  /** Uniform integer in [0, n). */
  int (n: number): number {
    return Math.floor(this.float() * n)
  }

  chance (probability: number): boolean {
    return this.float() < probability
  }

  pick<T> (items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('cannot pick from an empty list')
    return items[this.int(items.length)]!
  }

  /** The index drawn with probability weight / total, given the running totals of the weights. */
  weighted (cumulative: readonly number[]): number {
    const target = this.float() * cumulative[cumulative.length - 1]!
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const middle = (low + high) >>> 1
      if (cumulative[middle]! > target) high = middle
      else low = middle + 1
    }
    return low
  }

  /** Between min and max with every order of magnitude equally likely: a delay is as often minutes as hours. */
  logUniform (min: number, max: number): number {
    return min * Math.exp(this.float() * Math.log(max / min))
  }

  /** Exponentially distributed with the given mean: the wait until the next random occurrence. */
  exponential (mean: number): number {
    return -mean * Math.log(1 - this.float())
  }

  /** How many things happen in a period where `mean` happen on average (Knuth's method; fine for small means). */
  poisson (mean: number): number {
    if (mean <= 0) return 0
    const limit = Math.exp(-mean)
    let count = 0
    let product = this.float()
    while (product > limit) {
      count++
      product *= this.float()
    }
    return count
  }

  /**
   * A random UUID version 4, as text. With a key (four 32-bit words), the drawn words are XORed
   * with it first: streams of the same seed then give other IDs under other keys, and draw the
   * same numbers (so everything else they choose stays the same).
   */
  uuid (key?: readonly number[]): string {
    const word = (index: number) => (this.uint32() ^ (key?.[index] ?? 0)) >>> 0
    const hex = hex8(word(0)) + hex8(word(1)) + hex8(word(2)) + hex8(word(3))
    const variant = '89ab'[parseInt(hex[16]!, 16) & 3]
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20)}`
  }

  /**
   * A UUID version 7 (RFC 9562) for an event at `epochMs`, as text: the instant's 48 bits of
   * milliseconds first, then 74 random bits. It draws the same four words as uuid, XORed with
   * `key` the same way, so everything else a stream chooses stays the same. Time-ordered IDs are
   * what RFC 9562 recommends for new keys: in an answer, which is in date_time order, consecutive
   * IDs share their leading digits, and a compressed answer is smaller (the benchmark's large
   * answer gzipped: 16.0% of its bytes with version 4 IDs, 14.4–14.5% with these, in the full
   * runs of 2026-12-01 to 08; BENCHMARKS.md, "Compression").
   */
  uuid7 (epochMs: number, key?: readonly number[]): string {
    const word = (index: number) => (this.uint32() ^ (key?.[index] ?? 0)) >>> 0
    const random = hex8(word(0)) + hex8(word(1)) + hex8(word(2)) + hex8(word(3))
    const time = Math.max(0, Math.floor(epochMs)).toString(16).padStart(12, '0').slice(-12)
    const variant = '89ab'[parseInt(random[3]!, 16) & 3]
    return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(0, 3)}-${variant}${random.slice(4, 7)}-${random.slice(7, 19)}`
  }

  shuffle<T> (items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const item = items[i]!
      items[i] = items[j]!
      items[j] = item
    }
    return items
  }
}

function hex8 (value: number): string {
  return value.toString(16).padStart(8, '0')
}

function splitmix32 (state: number): { state: number, value: number } {
  const next = (state + 0x9e3779b9) | 0
  let z = next
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad)
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97)
  return { state: next, value: (z ^ (z >>> 15)) >>> 0 }
}

/** FNV-1a over the label's UTF-16 code units. */
function hashLabel (label: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < label.length; i++) hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193)
  return hash >>> 0
}
