import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Counter } from 'prom-client'
import { ErrorObject } from '../../schemas/error.js'
import { IngestResponse, NDJSON_CONTENT_TYPE } from '../../schemas/ingest.js'
import { entitiesOf, type EventLine } from '../data/event-lines.js'
import { WireEvent } from '../data/wire-line.js'
import { directoryKeyOf } from '../auth/directory-key.js'
import { sendError } from '../http/replies.js'
import { readIngestBody } from '../ingest/ingest-body.js'
import type { TokenScope } from '../../schemas/tokens.js'
import type { EntityRegistry } from '../registry/entity-registry.js'
import type { IngestEvent, IngestRefusal, WriteOutcome } from '../store/event-writer.js'

export interface IngestRouteOptions {
  /** INGEST_MAX_BYTES: a larger body is 413 payload_too_large. */
  maxBytes: number
  /** INGEST_MAX_LINES: a body of more lines (or array elements) is 413 payload_too_large. */
  maxLines: number
  /** INGEST_MAX_BYTES_IN_FLIGHT: bodies being received or read at once, in bytes; beyond, 503 service_unavailable. */
  maxBytesInFlight: number
  /** What Retry-After says on that 503. */
  retryAfterSeconds: number
}

/**
 * POST /ingest/events: events into the store while the provider serves, with the rules of
 * `npm run ingest`, then out to the live channels. Its own plugin, so the body parsers (text, not
 * objects: each line or element is checked on its own) apply to this route alone.
 */
const ingestRoutes: FastifyPluginAsyncTypebox<IngestRouteOptions> = async function (fastify, options) {
  const ingested = new Counter({ name: 'events_ingested_total', help: 'Lines posted to /ingest/events, by outcome (written, unchanged, refused)', labelNames: ['outcome'] as const, registers: [fastify.metrics] })

  const heldStreams = new WeakMap<object, () => void>()
  // The bytes each ingest holds of the process's INGEST_MAX_BYTES_IN_FLIGHT, from before its body
  // is read until it is answered or abandoned: without a bound, MAX_REQUESTS_IN_FLIGHT bodies of
  // INGEST_MAX_BYTES each (and twice that while each is joined) could be held at once.
  const bytesHeld = new WeakMap<object, number>()
  let bytesInFlight = 0
  const release = (request: object): void => {
    bytesInFlight -= bytesHeld.get(request) ?? 0
    bytesHeld.delete(request)
  }
  fastify.removeAllContentTypeParsers()
  // Bytes: NDJSON lines in wire form are read from them without being decoded (ingest-body.ts).
  fastify.addContentTypeParser([NDJSON_CONTENT_TYPE, 'application/json'], { parseAs: 'buffer', bodyLimit: options.maxBytes }, (_request, body, done) => {
    done(null, body)
  })

  fastify.post('/ingest/events', {
    schema: {
      response: {
        200: IngestResponse,
        400: ErrorObject,
        401: ErrorObject,
        403: ErrorObject,
        413: ErrorObject,
        415: ErrorObject,
        500: ErrorObject,
        503: ErrorObject
      }
    },
    bodyLimit: options.maxBytes,
    config: { access: 'ingest' },
    // From its start (its body may still be on its way) until its answer is sent, an ingest holds
    // a shutdown's end of the streams, so that they get its events (live-events.ts).
    onRequest (request, _reply, done) {
      heldStreams.set(request, fastify.live.holdStreams())
      done()
    },
    onResponse (request, _reply, done) {
      heldStreams.get(request)?.()
      release(request)
      done()
    },
    onRequestAbort (request, done) {
      heldStreams.get(request)?.()
      release(request)
      done()
    },
    // Before the body is read, so that its type is judged before its size (415, then 413), and
    // its size before the bytes in flight (413 says more than a 503 would).
    preParsing (request, reply, payload, done) {
      if (!isTakenAsSent(request.headers['content-type'], request.headers['content-encoding'])) {
        sendError(reply, 'unsupported_media_type')
        return
      }
      // A chunked body, of no declared length, may be as large as INGEST_MAX_BYTES; a request
      // with neither has no body.
      const declared = request.headers['content-length'] !== undefined
        ? Number(request.headers['content-length'])
        : request.headers['transfer-encoding'] !== undefined ? options.maxBytes : 0
      // Over INGEST_MAX_BYTES: Fastify answers 413 without reading it.
      if (!(declared <= options.maxBytes)) {
        done(null, payload)
        return
      }
      if (bytesInFlight + declared > options.maxBytesInFlight) {
        reply.header('retry-after', String(options.retryAfterSeconds))
        sendError(reply, 'service_unavailable')
        return
      }
      bytesInFlight += declared
      bytesHeld.set(request, declared)
      done(null, payload)
    }
  }, async function (request, reply) {
    // preParsing answered 415 to a request without one.
    const type = request.headers['content-type'] ?? ''
    const body = withoutByteOrderMark(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0))
    const read = await readIngestBody(body, type.toLowerCase().startsWith(NDJSON_CONTENT_TYPE) ? 'ndjson' : 'json-array', options.maxLines)
    if ('rejected' in read) return sendError(reply, read.rejected)
    // Judged by its token as it is now, its body in and read: TOKENS_FILE may have been reloaded
    // meanwhile (up to REQUEST_TIMEOUT_MS), revoking the token or changing its scope or rights.
    const key = directoryKeyOf(request)
    const principal = key === undefined ? request.principal : fastify.tokens.byKey(key)
    if (principal === undefined) return sendError(reply, 'unauthorized_request')
    if (!principal.ingest) return sendError(reply, 'forbidden')
    const { lines } = read
    const { events, refused } = servableEvents(lines, fastify.entityRegistry, principal.scope)
    const outcome: WriteOutcome = events.length === 0
      ? { written: 0, unchanged: 0, refused: [], stored: [] }
      : await fastify.live.ingest(events)
    const answer = {
      written: outcome.written,
      unchanged: outcome.unchanged,
      refused: [...refused, ...outcome.refused].sort((a, b) => a.line - b.line)
    }
    ingested.inc({ outcome: 'written' }, answer.written)
    ingested.inc({ outcome: 'unchanged' }, answer.unchanged)
    ingested.inc({ outcome: 'refused' }, answer.refused.length)
    return answer
  })
}

/**
 * Whether a body of this type and coding is taken as it is sent: NDJSON or a JSON array, in
 * UTF-8, the only encoding of JSON (RFC 8259: a body of another charset would be read as other
 * text than the one sent), and not compressed (a compressed body is another media type to this
 * endpoint).
 */
function isTakenAsSent (type: string | undefined, coding: string | undefined): boolean {
  if (type === undefined || (coding !== undefined && coding.trim().toLowerCase() !== 'identity')) return false
  // Judged here, not left to the body parsers, so that it comes before the bytes in flight (a review's finding).
  const essence = type.split(';', 1)[0]!.trim().toLowerCase()
  if (essence !== NDJSON_CONTENT_TYPE && essence !== 'application/json') return false
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1]
  return charset === undefined || /^utf-?8$/i.test(charset)
}

const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf])

/** The body without a leading UTF-8 byte order mark, which a JSON parser may ignore (RFC 8259) and Windows tools write. */
function withoutByteOrderMark (body: Buffer): Buffer {
  return body.subarray(0, BYTE_ORDER_MARK.length).equals(BYTE_ORDER_MARK) ? body.subarray(BYTE_ORDER_MARK.length) : body
}

/**
 * The valid events of entities the registry knows and, for a scoped token, of its scope; the
 * rest refused, each with its reason (outside the scope reads as unknown: nothing is learnt of
 * what others have, and nothing is written where others would see it).
 */
function servableEvents (lines: readonly EventLine[], registry: EntityRegistry, scope: TokenScope | undefined): { events: IngestEvent[], refused: IngestRefusal[] } {
  const events: IngestEvent[] = []
  const refused: IngestRefusal[] = []
  const known = registry.knownNumbers()
  for (const parsed of lines) {
    if ('problem' in parsed) {
      refused.push({ line: parsed.line, reason: parsed.problem })
      continue
    }
    // Its device and space only: a line in wire form keeps its message unmade (WireEvent).
    const entities = entitiesOf(parsed.event)
    const outOfScope = scope === undefined ? undefined : registry.scopeRefusal(entities, scope)
    if (outOfScope !== undefined) {
      refused.push({ line: parsed.line, reason: outOfScope })
      continue
    }
    const wire = parsed.event instanceof WireEvent ? parsed.event : undefined
    if (!(wire !== undefined ? wire.isKnownBy(known, registry) : registry.knowsEntityOf(entities))) {
      // It could never be served: refused rather than stored out of sight.
      const entity = entities.device_id !== undefined ? `device ${JSON.stringify(entities.device_id)}` : `space ${JSON.stringify(entities.space_id)}`
      refused.push({ line: parsed.line, reason: `${entity} is not in the entities file` })
    } else if (entities.device_id !== undefined && !(wire !== undefined ? wire.isSpaceKnownBy(known, registry) : registry.knowsSpace(entities.space_id))) {
      // A device may report from another space than its registry one (devices move), but from a
      // space the registry knows: one it does not would be an entity no request could name.
      refused.push({ line: parsed.line, reason: `space ${JSON.stringify(entities.space_id)} is not in the entities file` })
    } else {
      events.push(parsed)
    }
  }
  return { events, refused }
}

export default ingestRoutes
