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

/** Whether a request carries `Authorization: Bearer <token>` with one of the tokens. */
export type TokenCheck = (request: IncomingMessage) => boolean

/**
 * The check of every request's token. Node keeps only the first of repeated Authorization
 * headers; a request with two is ambiguous (which one did the client mean, and which one did a
 * proxy add?), so it is refused whatever they hold.
 */
export function createTokenCheck (tokens: readonly string[]): TokenCheck {
  if (tokens.length === 0) throw new Error('authentication needs at least one token')
  const accepted = tokens.map(digest)
  return function isAuthorized (request) {
    const header = request.headers.authorization
    if (header === undefined) return false
    const match = BEARER.exec(header)
    if (match === null || authorizationHeaders(request.rawHeaders) !== 1) return false
    const offered = digest(match[1]!)
    let valid = false
    for (const token of accepted) valid = timingSafeEqual(offered, token) || valid
    return valid
  }
}

function authorizationHeaders (rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++
  }
  return count
}
