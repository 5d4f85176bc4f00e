import type { TokenScope } from '../../schemas/tokens.js'

/** Who a request's bearer token says is asking, and what it may do. */
export interface Principal {
  /** For logs and rate limits: the token's name (TOKENS_FILE), `jwt:<sub>`, or undefined for API_TOKENS and INGEST_TOKENS. */
  readonly name: string | undefined
  /**
   * What rate limits count requests by, one namespace per kind so that none can take another's
   * count: `token:<digest>` (API_TOKENS, INGEST_TOKENS), `file:<name>` (TOKENS_FILE), `jwt-sub:<sub>`,
   * `jwt-client:<client_id>` for a JWT without a sub, or `jwt-token:<digest>` for one naming
   * neither (an empty one names nothing).
   */
  readonly key: string
  readonly read: boolean
  readonly ingest: boolean
  /** undefined: every entity. */
  readonly scope: TokenScope | undefined
  /** When it must be checked again (a JWT: a minute after it was verified, or its exp if sooner), in ms since the epoch; undefined: never by itself. */
  readonly expiresMs?: number | undefined
  /** Checks it again then (a JWT: its signature against the keys as they are now, its exp): the principal it is now, or undefined when it is no longer accepted. */
  readonly recheck?: () => Promise<Principal | undefined>
  /** A JWT's: known from its signature, not from the token directory. */
  readonly jwt?: true
}
