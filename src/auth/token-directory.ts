import { tokenKey } from '../http/bearer-token.js'
import type { Principal } from './principal.js'

/**
 * The tokens the provider knows, by digest: API_TOKENS (read), INGEST_TOKENS (post events), both
 * for a token in both lists, and TOKENS_FILE's named, possibly scoped ones (swapped whole when the
 * file is reloaded). JWTs are checked elsewhere (jwt-verifier.ts): they are not known ahead.
 */
export class TokenDirectory {
  readonly #configured = new Map<string, Principal>()
  #file = new Map<string, Principal>()

  constructor (apiTokens: readonly string[], ingestTokens: readonly string[]) {
    for (const token of new Set([...apiTokens, ...ingestTokens])) {
      const key = tokenKey(token)
      this.#configured.set(key, {
        name: undefined,
        key: `token:${key}`,
        read: apiTokens.includes(token),
        ingest: ingestTokens.includes(token),
        scope: undefined
      })
    }
  }

  readonly #onReplaced: Array<() => void> = []
  #generation = 0

  /** Changes whenever what a token stands for may have changed (TOKENS_FILE reloaded). */
  get generation (): number {
    return this.#generation
  }

  /** TOKENS_FILE's tokens, by key (tokens-file.ts, keyOfHexDigest). */
  replaceFileTokens (tokens: Map<string, Principal>): void {
    this.#file = tokens
    this.#generation++
    for (const listener of this.#onReplaced) listener()
  }

  /** TOKENS_FILE's tokens in service. */
  fileTokens (): Iterable<Principal> {
    return this.#file.values()
  }

  /** Called after TOKENS_FILE's tokens were replaced (a reload): what was let in may not be any more. */
  onReplaced (listener: () => void): void {
    this.#onReplaced.push(listener)
  }

  /** What the token of this key may do now (undefined: it is not known any more). */
  byKey (key: string): Principal | undefined {
    return this.#configured.get(key) ?? this.#file.get(key)
  }

  /** Whether the token of this key is in API_TOKENS or INGEST_TOKENS. */
  isConfigured (key: string): boolean {
    return this.#configured.has(key)
  }

  lookup (token: string): Principal | undefined {
    const key = tokenKey(token)
    return this.#configured.get(key) ?? this.#file.get(key)
  }
}
