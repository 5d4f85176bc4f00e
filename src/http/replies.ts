import type { FastifyReply } from 'fastify'
import type { Readable } from 'node:stream'
import { ErrorCode, type ErrorCodeName } from '../../schemas/error.js'

/** Error bodies are fixed strings: serialised once, not per rejected request. */
const errorBodies = Object.fromEntries(
  Object.entries(ErrorCode).map(([message, status]) => [message, JSON.stringify({ status, message })])
) as Record<ErrorCodeName, string>

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** The error object of a code, as JSON text. */
export function errorBody (code: ErrorCodeName): string {
  return errorBodies[code]
}

/** The response header that carries the error code where HTTP allows no body (204). */
export const ERROR_CODE_HEADER = 'x-error-message'

/**
 * What a 401 names: the scheme a client must authenticate with (RFC 9110, 15.5.2: a 401 carries
 * it; RFC 6750, 3: Bearer).
 */
const CHALLENGE = 'Bearer'

export function sendError (reply: FastifyReply, code: ErrorCodeName): FastifyReply {
  const status = ErrorCode[code]
  if (status === 204) return reply.code(204).header(ERROR_CODE_HEADER, code).send()
  if (status === 401) reply.header('www-authenticate', CHALLENGE)
  return reply.code(status).type(JSON_CONTENT_TYPE).send(errorBodies[code])
}

/** Sends the error as an object, for the error handler, where the route's schema serialises it. */
export function errorObject (reply: FastifyReply, code: ErrorCodeName): FastifyReply {
  const status = ErrorCode[code]
  if (status === 401) reply.header('www-authenticate', CHALLENGE)
  return reply.code(status).type(JSON_CONTENT_TYPE).send({ status, message: code })
}

/**
 * Sends a body that is already JSON text (or a stream of it). Bodies are serialised ahead
 * (cached, or streamed from the store), so the route's response schema documents them but
 * does not serialise them again.
 */
export function sendJson (reply: FastifyReply, body: string | Buffer | Readable): FastifyReply {
  return reply.type(JSON_CONTENT_TYPE).send(body)
}

/** A response with no body (304). */
export function sendEmpty (reply: FastifyReply, status: number): FastifyReply {
  return reply.code(status).send()
}
