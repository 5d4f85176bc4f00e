import { createPublicKey, type JsonWebKey } from 'node:crypto'
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWK } from 'jose'

/** What jose's jwtVerify asks for a token's key. */
type GetKey = ReturnType<typeof createLocalJWKSet>

export interface JwksKeysSettings {
  url: string
  /**
   * The least time between two fetches, whether the last one answered or failed (30 s; tests set
   * less); a kid the keys lack may fetch sooner, after one that answered (unknownKidFetches).
   */
  cooldownMs: number
  /**
   * How many fetches kids the keys lack may make within one cooldown after a fetch that answered
   * (5): a key added to the set verifies at once, while forged kids cannot flood the identity
   * provider. A kid fetched for in vain makes no other fetch within the cooldown.
   */
  unknownKidFetches: number
  /** Keys older than this are fetched again before a token is judged with them (60 s). */
  maxAgeMs: number
  /** Keys not refreshed for this long (the identity provider unreachable) are no longer trusted (1 h). */
  staleLimitMs: number
  /** The largest key set read (1 MiB); a larger answer is a failed fetch. */
  maxBytes: number
  /** How long a fetch may take, its body included (5 s). */
  timeoutMs: number
  /** Told each failed fetch. */
  onFetchFailed?: (reason: string) => void
  /** Told when a fetched key set holds keys that can verify no token (unusableKeys). */
  onUnusableKeys?: (reason: string) => void
}

export const JWKS_DEFAULTS = {
  cooldownMs: 30_000,
  unknownKidFetches: 5,
  maxAgeMs: 60_000,
  staleLimitMs: 60 * 60_000,
  maxBytes: 1024 * 1024,
  timeoutMs: 5000
} as const

/**
 * The identity provider's key set (JWT_JWKS_URL), for jose's jwtVerify, kept here rather than by
 * jose's createRemoteJWKSet, which (a review found) fetched again on every request while its
 * fetches failed (its cooldown starts only at a success: a flood of forged tokens became a flood
 * on the identity provider), read a key set of any size whole (2 GB took 6 GB of memory), and
 * trusted a key for 10 minutes after its withdrawal. Here:
 * - at most one fetch per cooldown, answered or not, and one at a time (concurrent callers wait
 *   for the same one);
 * - keys older than maxAge are fetched again before a token is judged with them (a quiet spell
 *   then ends with a fresh set, not with a token of a key withdrawn meanwhile; a review found the
 *   background refresh this had first judged that token with the old keys), so a withdrawn key is
 *   refused within maxAge; a fetch that fails leaves the keys held serving, so an identity
 *   provider down for a while stops nobody; keys not refreshed for staleLimit are dropped;
 * - a kid the keys do not have makes a fetch (a key added since), even within the cooldown when
 *   the last fetch answered (an identity provider rotating its keys publishes the new one just
 *   before its first token: a test that rotates and asks at once, or a client, would otherwise
 *   be refused for up to the cooldown), at most unknownKidFetches of them a cooldown, and never
 *   twice for one kid within it;
 * - a fetch is bounded in time and in bytes, follows no redirect (as jose's did not: whoever
 *   controls a redirect would choose the keys), and may begin with a byte order mark;
 * - ages on the monotonic clock: a wall clock stepped back neither freezes the fetches nor keeps
 *   old keys longer.
 */
export class JwksKeys {
  readonly #settings: JwksKeysSettings
  #keys: GetKey | undefined
  #fetchedAt = -Infinity
  #attemptedAt = -Infinity
  #lastFailed = false
  #fetching: Promise<void> | undefined
  /** When fetches for kids the keys lacked began, within the last cooldown. */
  #kidFetchTimes: number[] = []
  /** Kids fetched for in vain, and when (forgotten after a cooldown; at most VAIN_KIDS_HELD). */
  readonly #vainKids = new Map<string, number>()

  constructor (settings: JwksKeysSettings) {
    this.#settings = settings
  }

  readonly getKey = async (...args: Parameters<GetKey>): Promise<Awaited<ReturnType<GetKey>>> => {
    const age = performance.now() - this.#fetchedAt
    if (age > this.#settings.staleLimitMs) this.#keys = undefined
    if (this.#keys === undefined || age > this.#settings.maxAgeMs) await this.#refresh()
    const keys = this.#keys
    if (keys === undefined) throw new errors.JWKSNoMatchingKey()
    try {
      return await keys(...args)
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
      const kid = String(args[0]?.kid ?? '')
      await this.#refreshForKid(kid)
      if (this.#keys === undefined || this.#keys === keys) throw error
      try {
        return await this.#keys(...args)
      } catch (again) {
        if (again instanceof errors.JWKSNoMatchingKey) this.#rememberVain(kid)
        throw again
      }
    }
  }

  /**
   * A fetch for a kid the keys lack: the cooldown's rule, except after a fetch that answered,
   * where a kid not fetched for in vain lately may fetch while the cooldown's budget lasts.
   */
  #refreshForKid (kid: string): Promise<void> {
    if (this.#fetching !== undefined) return this.#fetching
    const now = performance.now()
    const cooldown = this.#settings.cooldownMs
    if (this.#lastFailed || now - this.#attemptedAt >= cooldown) return this.#refresh()
    const vainAt = this.#vainKids.get(kid)
    if (vainAt !== undefined && now - vainAt < cooldown) return Promise.resolve()
    this.#kidFetchTimes = this.#kidFetchTimes.filter((at) => now - at < cooldown)
    if (this.#kidFetchTimes.length >= this.#settings.unknownKidFetches) return Promise.resolve()
    this.#kidFetchTimes.push(now)
    return this.#fetch()
  }

  #rememberVain (kid: string): void {
    // A kid as long as a header allows is not kept (1,000 of them would be megabytes): the budget
    // bounds its fetches all the same.
    if (kid.length > VAIN_KID_MAX_LENGTH) return
    const now = performance.now()
    if (this.#vainKids.size >= VAIN_KIDS_HELD) {
      for (const [held, at] of this.#vainKids) if (now - at >= this.#settings.cooldownMs) this.#vainKids.delete(held)
      // All of them recent: a flood of forged kids, which the budget bounds anyway.
      if (this.#vainKids.size >= VAIN_KIDS_HELD) this.#vainKids.clear()
    }
    this.#vainKids.set(kid, now)
  }

  /** Fetches the key set unless one was tried within the cooldown; never rejects. */
  #refresh (): Promise<void> {
    if (this.#fetching !== undefined) return this.#fetching
    if (performance.now() - this.#attemptedAt < this.#settings.cooldownMs) return Promise.resolve()
    return this.#fetch()
  }

  /** Fetches the key set now (one at a time); never rejects. */
  #fetch (): Promise<void> {
    if (this.#fetching !== undefined) return this.#fetching
    this.#attemptedAt = performance.now()
    this.#fetching = fetchKeySet(this.#settings).then((keySet) => {
      const unusable = unusableKeys(keySet)
      if (unusable !== undefined) this.#settings.onUnusableKeys?.(unusable)
      this.#keys = createLocalJWKSet(keySet)
      this.#fetchedAt = performance.now()
      this.#lastFailed = false
    }, (error: unknown) => {
      this.#lastFailed = true
      const cause = (error as Error).cause
      this.#settings.onFetchFailed?.((error as Error).message + (cause instanceof Error ? ` (${cause.message})` : ''))
    }).finally(() => {
      this.#fetching = undefined
    })
    return this.#fetching
  }
}

/** The kids fetched for in vain remembered at most, and the longest one remembered. */
const VAIN_KIDS_HELD = 1000
const VAIN_KID_MAX_LENGTH = 256

/**
 * Which keys of the set can verify no token here (RS256 or ES256), said for the log; undefined
 * when every key can. Such a set is still taken as it is (an identity provider's set is what it
 * publishes, and one without usable keys withdraws them all), but without this every token would
 * be refused and nothing would say why (a tester's finding).
 */
export function unusableKeys (keySet: JSONWebKeySet): string | undefined {
  const unusable: string[] = []
  for (const [index, jwk] of keySet.keys.entries()) {
    const name = typeof jwk.kid === 'string' ? `kid ${JSON.stringify(jwk.kid)}` : `key ${index + 1}`
    const why = whyUnusable(jwk)
    if (why !== undefined) unusable.push(`${name} ${why}`)
  }
  if (unusable.length === 0) return undefined
  const usable = keySet.keys.length - unusable.length
  return `${usable} of its ${keySet.keys.length} keys can verify tokens; ${unusable.join('; ')}`
}

/** What keeps a key from verifying a token here, as jose's key set judges it; undefined when nothing does. */
function whyUnusable (jwk: JWK): string | undefined {
  if (jwk.use !== undefined && jwk.use !== 'sig') return `is for ${JSON.stringify(jwk.use)}, not signatures`
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return 'has key_ops without "verify"'
  if (jwk.ext !== undefined && typeof jwk.ext !== 'boolean') return 'has an "ext" that is not true or false'
  if (jwk.d !== undefined) return 'is a private key (a key set holds public keys only)'
  if (jwk.kty === 'RSA') {
    if (jwk.alg !== undefined && jwk.alg !== 'RS256') return `is for ${JSON.stringify(jwk.alg)}, not RS256`
  } else if (jwk.kty === 'EC') {
    if (jwk.crv !== 'P-256' || (jwk.alg !== undefined && jwk.alg !== 'ES256')) return `is for ${JSON.stringify(jwk.alg ?? jwk.crv)}, not ES256 (P-256)`
  } else {
    return `is of type ${JSON.stringify(jwk.kty)}, not RSA or EC`
  }
  let key
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
  } catch (error) {
    return `is not a valid public key (${(error as Error).message})`
  }
  const bits = key.asymmetricKeyDetails?.modulusLength
  if (jwk.kty === 'RSA' && (bits === undefined || bits < 2048)) return `is of ${bits ?? 'unknown'} bits (RS256 needs 2048 or more)`
  return undefined
}

async function fetchKeySet ({ url, maxBytes, timeoutMs }: JwksKeysSettings): Promise<JSONWebKeySet> {
  const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) })
  if (response.status !== 200) {
    await response.body?.cancel()
    throw new Error(`the key set answered ${response.status}`)
  }
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (declared > maxBytes) {
    await response.body?.cancel()
    throw new Error(`the key set is larger than ${maxBytes} bytes (${declared})`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  if (response.body !== null) {
    for await (const chunk of response.body) {
      size += chunk.byteLength
      // Leaving the loop cancels the rest of the body.
      if (size > maxBytes) throw new Error(`the key set is larger than ${maxBytes} bytes`)
      chunks.push(chunk)
    }
  }
  // TextDecoder drops a leading byte order mark, as Response.json() (jose's way) does.
  const keySet = JSON.parse(new TextDecoder().decode(Buffer.concat(chunks))) as JSONWebKeySet
  // createLocalJWKSet checks the shape too; this names the fault.
  if (typeof keySet !== 'object' || keySet === null || !Array.isArray(keySet.keys)) throw new Error('the key set is not a JSON Web Key Set (no "keys" array)')
  createLocalJWKSet(keySet)
  return keySet
}
