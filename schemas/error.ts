import { Type, type Static } from '@sinclair/typebox'

/** Every error code the provider can answer with, and the HTTP status that carries it. */
export const ErrorCode = {
  unauthorized_request: 401,
  invalid_parameter: 400,
  duplicate_parameter: 400,
  missing_parameter: 400,
  invalid_parameter_combination: 400,
  invalid_start_date: 403,
  invalid_end_date: 403,
  not_implemented: 204,
  /** A valid token without the right this route needs (a consumer token posting events, an ingest token reading them). */
  forbidden: 403,
  /** An ingest body that is neither NDJSON nor a JSON array at all. */
  invalid_body: 400,
  /** An ingest body over INGEST_MAX_BYTES, or of more lines than INGEST_MAX_LINES. */
  payload_too_large: 413,
  /** An ingest body of another type than application/x-ndjson or application/json. */
  unsupported_media_type: 415,
  not_found: 404,
  /** HTTP the server cannot read (a malformed request line or header). */
  bad_request: 400,
  /** The request did not arrive in time (REQUEST_TIMEOUT_MS). */
  request_timeout: 408,
  /** The request line and headers are larger than Node's limit (16 KiB). */
  request_header_fields_too_large: 431,
  /** More requests than RATE_LIMIT allows a token (with Retry-After). */
  too_many_requests: 429,
  internal_error: 500,
  service_unavailable: 503
} as const

export type ErrorCodeName = keyof typeof ErrorCode

export const ErrorObject = Type.Object({
  status: Type.Integer({ minimum: 100, maximum: 599, description: 'the HTTP status of the answer' }),
  message: Type.Union((Object.keys(ErrorCode) as ErrorCodeName[]).map((code) => Type.Literal(code)), { description: 'the error code' })
}, { $id: 'ErrorObject', additionalProperties: false, description: 'An error: every error answer carries one (except 204, whose code is in X-Error-Message)' })

export type ErrorObject = Static<typeof ErrorObject>
