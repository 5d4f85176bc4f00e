import { hash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/**
 * A token's digest, the key it is looked up by: tokens are compared as SHA-256 digests only (a
 * lookup's time can tell at most how much of a digest matched, which says nothing of the token),
 * and TOKENS_FILE holds nothing else. One-shot: a createHash() object per request is a native
 * object whose weak handle every young-generation GC must process, and at tens of thousands of
 * requests a second those callbacks were half of each GC pause.
 */
export function tokenDigest (token: string): string {
  return hash('sha256', token, 'hex')
}

/** The digest as the directory's key: base64, a shorter string to hash than hex on every request. */
export function tokenKey (token: string): string {
  return hash('sha256', token, 'base64')
}

/** The key of a digest given in hex (TOKENS_FILE's sha256). */
export function keyOfHexDigest (hex: string): string {
  return Buffer.from(hex, 'hex').toString('base64')
}

/**
 * The token of a request's `Authorization: Bearer <token>`, or undefined. Node keeps only the
 * first of repeated Authorization headers; a request with two is ambiguous (which one did the
 * client mean, and which one did a proxy add?), so it has none whatever they hold.
 */
export function bearerTokenOf (request: IncomingMessage): string | undefined {
  const header = authorizationOf(request)
  return header === undefined ? undefined : bearerTokenIn(header)
}

/** The request's one Authorization header (undefined when it has none, or more than one). */
export function authorizationOf (request: IncomingMessage): string | undefined {
  const header = request.headers.authorization
  if (header === undefined || authorizationHeaders(request.rawHeaders) !== 1) return undefined
  return header
}

/** The token of an Authorization header's `Bearer <token>`, or undefined. */
export function bearerTokenIn (header: string): string | undefined {
  return BEARER.exec(header)?.[1]
}

function authorizationHeaders (rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++
  }
  return count
}
