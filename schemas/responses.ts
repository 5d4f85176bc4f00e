import { ErrorObject } from './error.js'

/** The error responses every authenticated route can give, for route schemas to spread in. */
export const errorResponses = {
  400: ErrorObject,
  401: ErrorObject,
  500: ErrorObject
} as const
