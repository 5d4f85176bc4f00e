/** The encodings the provider compresses with, in its order of preference. */
export type ContentCoding = 'br' | 'gzip'

/**
 * The coding to answer with for an Accept-Encoding header: brotli, then gzip, among those the
 * client accepts (q > 0; `*` accepts both unless listed with q=0); undefined for none.
 */
export function preferredCoding (header: string | string[] | undefined): ContentCoding | undefined {
  if (header === undefined) return undefined
  const accepted = new Map<string, number>()
  for (const item of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name, ...parameters] = item.trim().toLowerCase().split(';')
    if (name === undefined || name === '') continue
    const q = parameters.map((p) => p.trim()).find((p) => p.startsWith('q='))
    accepted.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0)
  }
  for (const coding of ['br', 'gzip'] as const) {
    const q = accepted.get(coding) ?? accepted.get('*')
    if (q !== undefined && q > 0) return coding
  }
  return undefined
}
