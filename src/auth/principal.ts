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
  /** When it must be checked again (a JWT: its exp, or a minute after it was verified without one), in ms since the epoch; undefined: never by itself. */
  readonly expiresMs?: number | undefined
  /** A JWT's: known from its signature, not from the token directory. */
  readonly jwt?: true
}
