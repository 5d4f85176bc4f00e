/**
 * The parameter names of a request's raw query string, decoded, in order, repeats kept: the
 * parsed query folds repeats together, so duplicates can only be seen here. A name that cannot be
 * decoded is undefined (no endpoint knows it).
 */
export function readParameterNames (url: string): Array<string | undefined> {
  const mark = url.indexOf('?')
  if (mark === -1) return []
  const names: Array<string | undefined> = []
  for (const pair of url.slice(mark + 1).split('&')) {
    if (pair === '') continue
    const equals = pair.indexOf('=')
    const raw = equals === -1 ? pair : pair.slice(0, equals)
    names.push(decodeName(raw))
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
