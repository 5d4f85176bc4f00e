import type { ErrorCodeName } from '../../schemas/error.js'

const AMPERSAND = 0x26
const EQUALS = 0x3d
const PERCENT = 0x25
const PLUS = 0x2b

/** A route's parameter names and which of them are required or exclusive (its querystring schema and config.queryRules). */
export interface NameRules {
  known: readonly string[]
  required: readonly string[]
  exclusive: readonly string[]
}

/** Known names a route may list: each is a bit of a 32-bit mask. */
const MAX_KNOWN = 31

/**
 * The interface's name rules for one route, in its order, on a request's raw URL: every name must
 * be known (400 invalid_parameter, whatever else is wrong), none may repeat (duplicate_parameter:
 * the parsed query folds repeats together, so they can only be seen here), the required ones must
 * be there (missing_parameter), and at most one exclusive one may be given
 * (invalid_parameter_combination). The first broken one, or undefined.
 *
 * Names are read as the plain way reads them: the query string split on `&`, empty pairs
 * skipped, each name up to its first `=`, `+` a space, then percent-decoded (a name that cannot be
 * decoded is known to no route).
 *
 * This runs on every request of the interface's routes, so it makes nothing: one pass over the
 * query string, each name compared in place with the route's few known names (no slice, no
 * string hashed into a Set), the names seen kept as bits. Only a name holding `+` or `%` is cut
 * out and decoded. Measured against the names read into an array and checked against a Set:
 * BENCHMARKS.md, "What profiling found".
 */
export function compileNameRules (rules: NameRules): (url: string) => ErrorCodeName | undefined {
  const known = [...rules.known]
  if (known.length > MAX_KNOWN) throw new Error(`a route may list at most ${MAX_KNOWN} parameters, not ${known.length}`)
  const bitsOf = (names: readonly string[]) => names.reduce((bits, name) => {
    const index = known.indexOf(name)
    if (index === -1) throw new Error(`${name} is not one of the route's parameters`)
    return bits | (1 << index)
  }, 0)
  const requiredBits = bitsOf(rules.required)
  const exclusiveBits = bitsOf(rules.exclusive)
  const lengths = known.map((name) => name.length)

  /** The index of the known name url[start, end) spells as it is, or -1. */
  const knownAt = (url: string, start: number, end: number): number => {
    const length = end - start
    for (let i = 0; i < known.length; i++) {
      if (lengths[i] === length && url.startsWith(known[i]!, start)) return i
    }
    return -1
  }

  return (url) => {
    const end = url.length
    let at = url.indexOf('?') + 1
    let seen = 0
    let repeated = false
    if (at > 0) {
      while (at < end) {
        let nameEnd = at
        let escaped = false
        let code = 0
        while (nameEnd < end && (code = url.charCodeAt(nameEnd)) !== AMPERSAND && code !== EQUALS) {
          if (code === PLUS || code === PERCENT) escaped = true
          nameEnd++
        }
        let pairEnd = code === EQUALS ? url.indexOf('&', nameEnd) : nameEnd
        if (pairEnd === -1) pairEnd = end
        if (pairEnd > at) {
          const index = escaped ? known.indexOf(decodeName(url.slice(at, nameEnd)) as string) : knownAt(url, at, nameEnd)
          // An unknown name is the first rule: it wins over a repeat seen before it.
          if (index === -1) return 'invalid_parameter'
          const bit = 1 << index
          if ((seen & bit) !== 0) repeated = true
          seen |= bit
        }
        at = pairEnd + 1
      }
    }
    if (repeated) return 'duplicate_parameter'
    if ((seen & requiredBits) !== requiredBits) return 'missing_parameter'
    const given = seen & exclusiveBits
    // More than one bit set.
    if ((given & (given - 1)) !== 0) return 'invalid_parameter_combination'
    return undefined
  }
}

/** A name with `+` or `%`, decoded; undefined when it cannot be. */
function decodeName (raw: string): string | undefined {
  const spaced = raw.replaceAll('+', ' ')
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return undefined
  }
}
