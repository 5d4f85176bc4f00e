/** The encodings the provider compresses with, in its order of preference. */
export type ContentCoding = 'br' | 'gzip'

/**
 * The coding to answer with for an Accept-Encoding header (RFC 9110, 12.5.3): of brotli and
 * gzip, the one the client ranks highest (its q, or that of `*` when it is not listed), brotli on
 * a tie; undefined when the client accepts neither (q=0, or not listed without `*`) or ranks
 * `identity` above both (the plain answer is what it prefers).
 */
export function preferredCoding (header: string | string[] | undefined): ContentCoding | undefined {
  if (header === undefined) return undefined
  const accepted = new Map<string, number>()
  for (const item of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name = '', ...parameters] = item.toLowerCase().split(';').map((part) => part.trim())
    if (name === '') continue
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter))
    // A q that is not a number accepts nothing rather than everything.
    accepted.set(name, q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim()) || 0)
  }
  let best: ContentCoding | undefined
  let bestQ = 0
  for (const coding of ['br', 'gzip'] as const) {
    const q = accepted.get(coding) ?? accepted.get('*') ?? 0
    if (q > bestQ) {
      best = coding
      bestQ = q
    }
  }
  const identityQ = accepted.get('identity')
  return identityQ !== undefined && identityQ > bestQ ? undefined : best
}
