import { pipeline, type Readable } from 'node:stream'
import { constants, createBrotliCompress, createGzip } from 'node:zlib'
import type { ContentCoding } from './accept-encoding.js'

/** Answers smaller than this go uncompressed: the framing costs more than it saves. */
export const COMPRESS_FROM_BYTES = 1024

/**
 * A body compressed as it is read: a whole answer, or a streamed one chunk by chunk, never held
 * whole. Brotli at quality 4 (its default, 11, is far too slow for answers made per request),
 * gzip at zlib's default level. The zlib work runs on libuv's thread pool. Destroying the
 * returned stream (the client left) destroys the body too, so a store's query is released.
 */
export function compressedStream (body: Buffer | Readable, coding: ContentCoding): Readable {
  const zip = coding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })
    : createGzip()
  if (Buffer.isBuffer(body)) zip.end(body)
  // Errors end both streams; the body's own handlers log a cut answer.
  else pipeline(body, zip, () => {})
  return zip
}
