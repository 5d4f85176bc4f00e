import { jwtVerify, type JWTPayload } from 'jose'
import type { TokenScope } from '../../schemas/tokens.js'
import type { Principal } from './principal.js'
import { tokenKey } from '../http/bearer-token.js'
import { JWKS_DEFAULTS, JwksKeys, type JwksKeysSettings } from './jwks-keys.js'

export interface JwtSettings {
  jwksUrl: string
  issuer: string
  audience: string
  /** The least time between two fetches of the key set (30 s; tests set less). */
  cooldownMs?: number
  /** Keys fetched again after (60 s), and a verified token checked again after (60 s; tests set less). */
  maxAgeMs?: number
}

/** Resolves a bearer token that is a valid JWT to its principal; undefined for any invalid one. */
export type JwtVerifier = (token: string) => Promise<Principal | undefined>

const SCOPE_CLAIMS = ['tag_ids', 'space_ids', 'device_ids'] as const

/**
 * OAuth2 access tokens (client credentials) from an identity provider: a JWT signed with RS256 or
 * ES256 by a key of JWT_JWKS_URL, unexpired (and not before its nbf), with JWT_ISSUER and
 * JWT_AUDIENCE. The keys are kept and fetched again as jwks-keys.ts says (when more than a
 * minute old, or for an unknown `kid`; at most once per 30 s, bounded in time and bytes). Its
 * scope comes from the claims `tag_ids`, `space_ids`, `device_ids`
 * (arrays of strings; none of them: every entity), with the semantics of TOKENS_FILE's scopes;
 * IDs the registry does not know simply select nothing.
 */
export function createJwtVerifier (settings: JwtSettings, keyEvents: Pick<JwksKeysSettings, 'onFetchFailed' | 'onUnusableKeys'> = {}): JwtVerifier {
  const maxAgeMs = settings.maxAgeMs ?? JWKS_DEFAULTS.maxAgeMs
  const keys = new JwksKeys({
    ...JWKS_DEFAULTS,
    url: settings.jwksUrl,
    cooldownMs: settings.cooldownMs ?? JWKS_DEFAULTS.cooldownMs,
    maxAgeMs,
    ...keyEvents
  }).getKey
  // A client sends its token with every request until it expires: verified once, then looked up
  // (its signature check and its scope's resolution are not repeated per request).
  // Kept until checkAt on the monotonic clock (a wall clock stepped back keeps nothing longer) and its exp.
  const verified = new Map<string, { principal: Principal, checkAt: number, expiresMs: number }>()
  // Checks under way, by token: callers at the same moment (the streams of one client, re-checked
  // together) share one, instead of one signature check each.
  const checking = new Map<string, Promise<Principal | undefined>>()
  const verify: JwtVerifier = async (token) => {
    const known = verified.get(token)
    if (known !== undefined) {
      if (known.checkAt > performance.now() && known.expiresMs > Date.now()) return known.principal
      verified.delete(token)
    }
    let check = checking.get(token)
    if (check === undefined) {
      check = checkToken(token).finally(() => { checking.delete(token) })
      checking.set(token, check)
    }
    return await check
  }
  const checkToken = async (token: string): Promise<Principal | undefined> => {
    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(token, keys, { issuer: settings.issuer, audience: settings.audience, algorithms: ['RS256', 'ES256'] }))
    } catch {
      return undefined
    }
    const scope = scopeOf(payload)
    if (scope === null) return undefined
    // Who the client is: its sub, else its client_id (RFC 9068), else the token alone; rate
    // limits count by that, apart from the configured and named tokens (principal.ts).
    const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : undefined
    const clientId = typeof payload.client_id === 'string' && payload.client_id !== '' ? payload.client_id : undefined
    const name = `jwt:${sub ?? clientId ?? 'unnamed'}`
    const key = sub !== undefined ? `jwt-sub:${sub}` : clientId !== undefined ? `jwt-client:${clientId}` : `jwt-token:${tokenKey(token)}`
    // Checked again after a minute at the latest (its key may have been withdrawn meanwhile).
    const expiresMs = Math.min(typeof payload.exp === 'number' ? payload.exp * 1000 : Infinity, Date.now() + maxAgeMs)
    // An open stream checks it again then, and goes on while it is accepted (its key may be withdrawn).
    const principal: Principal = { name, key, read: true, ingest: false, scope, expiresMs, recheck: async () => await verify(token), jwt: true }
    if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!)
    verified.set(token, { principal, checkAt: performance.now() + maxAgeMs, expiresMs })
    return principal
  }
  return verify
}

/** Verified tokens kept (the oldest dropped first). */
const VERIFIED_CACHE_SIZE = 10_000

/** The scope of the claims; undefined when none is given, null when one is malformed (refused). */
function scopeOf (payload: JWTPayload): TokenScope | undefined | null {
  let scope: TokenScope | undefined
  for (const claim of SCOPE_CLAIMS) {
    const value = payload[claim]
    if (value === undefined) continue
    if (!Array.isArray(value) || !value.every((id) => typeof id === 'string')) return null
    scope = { ...scope, [claim]: value as string[] }
  }
  return scope
}

/** Whether a bearer token has a JWT's shape (three base64url parts), worth verifying. */
export function looksLikeJwt (token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)
}
