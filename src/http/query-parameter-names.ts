const AMPERSAND = 0x26
const EQUALS = 0x3d
const PERCENT = 0x25
const PLUS = 0x2b

/**
 * The parameter names of a request's raw query string, decoded, in order, repeats kept: the
 * parsed query folds repeats together, so duplicates can only be seen here. A name that cannot be
 * decoded is undefined (no endpoint knows it).
 *
 * This runs on every request of the interface's routes: one pass over the query string, and a
 * name needs no string of its own but the slice (no split, no per-pair copies) unless it holds
 * `+` or `%`.
 */
export function readParameterNames (url: string): Array<string | undefined> {
  const names: Array<string | undefined> = []
  const end = url.length
  let at = url.indexOf('?') + 1
  if (at === 0) return names
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
    if (pairEnd > at) names.push(escaped ? decodeName(url.slice(at, nameEnd)) : url.slice(at, nameEnd))
    at = pairEnd + 1
  }
  return names
}

function decodeName (raw: string): string | undefined {
  const spaced = raw.replaceAll('+', ' ')
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return undefined
  }
}
