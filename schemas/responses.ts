import { ErrorObject } from './error.js'

/** The error responses every authenticated route can give, for route schemas to spread in. */
export const errorResponses = {
  400: ErrorObject,
  401: ErrorObject,
  /** A known token without this route's right. */
  403: ErrorObject,
  /** RATE_LIMIT. */
  429: ErrorObject,
  500: ErrorObject,
  /** Saturated, shutting down, or the store unavailable. */
  503: ErrorObject
} as const
