import { hash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/**
 * Comparing fixed-length digests keeps the comparison's time independent of the token's content
 * and length. One-shot: a createHash() object per request is a native object whose weak handle
 * every young-generation GC must process, and at tens of thousands of requests a second those
 * callbacks were half of each GC pause.
 */
function digest (token: string): Buffer {
  return hash('sha256', token, 'buffer')
}

/** What a token may do: read the consumer interface, post events, or both. */
export interface TokenRights {
  read: boolean
  ingest: boolean
}

export interface GrantedToken {
  token: string
  rights: TokenRights
}

/** The rights of a request's `Authorization: Bearer <token>`, or undefined for none or an unknown token. */
export type TokenLookup = (request: IncomingMessage) => TokenRights | undefined

/**
 * The check of every request's token. Node keeps only the first of repeated Authorization
 * headers; a request with two is ambiguous (which one did the client mean, and which one did a
 * proxy add?), so it is refused whatever they hold. Every token is compared, so the time taken
 * does not tell which one matched.
 */
export function createTokenLookup (granted: readonly GrantedToken[]): TokenLookup {
  if (granted.length === 0) throw new Error('authentication needs at least one token')
  const accepted = granted.map(({ token, rights }) => ({ digest: digest(token), rights }))
  return function rightsOf (request) {
    const header = request.headers.authorization
    if (header === undefined) return undefined
    const match = BEARER.exec(header)
    if (match === null || authorizationHeaders(request.rawHeaders) !== 1) return undefined
    const offered = digest(match[1]!)
    let found: TokenRights | undefined
    for (const { digest, rights } of accepted) {
      if (timingSafeEqual(offered, digest)) found = found === undefined ? rights : { read: found.read || rights.read, ingest: found.ingest || rights.ingest }
    }
    return found
  }
}

/** Consumer tokens read, ingest tokens post; a token in both lists does both. */
export function grantedTokens (apiTokens: readonly string[], ingestTokens: readonly string[]): GrantedToken[] {
  return [
    ...apiTokens.map((token) => ({ token, rights: { read: true, ingest: false } })),
    ...ingestTokens.map((token) => ({ token, rights: { read: false, ingest: true } }))
  ]
}
function authorizationHeaders (rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++
  }
  return count
}
