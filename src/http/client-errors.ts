import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { ErrorCode, type ErrorCodeName } from '../../schemas/error.js'
import { writeHeldAnswers } from './held-answers.js'
import { errorBody, JSON_CONTENT_TYPE } from './replies.js'

/** The Node error of a request that could not be read, and the error object that answers it. */
export function clientErrorCode (code: string | undefined): ErrorCodeName {
  if (code === 'HPE_HEADER_OVERFLOW') return 'request_header_fields_too_large'
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout'
  return 'bad_request'
}

/**
 * Answers, on the bare connection, a request Node could not read (malformed, headers over 16 KiB,
 * or not arrived within REQUEST_TIMEOUT_MS), with the error object like every other answer, then
 * closes the connection: what follows on it cannot be trusted to be a request. No token can be
 * checked first, since no request was read.
 */
export function answerClientError (error: Error & { code?: string }, socket: Socket): ErrorCodeName | undefined {
  // A connection reset by the client, or already closed: no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return undefined
  const code = clientErrorCode(error.code)
  const status = ErrorCode[code]
  const body = errorBody(code)
  // A request read before this one on the connection may have its answer held to the end of
  // the batch (plugins/batched-writes.ts): it goes first, as it would have without the hold.
  writeHeldAnswers()
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: ${JSON_CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
  return code
}
