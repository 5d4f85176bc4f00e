import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { Type } from '@sinclair/typebox'
import { ErrorObject } from '../../schemas/error.js'
import { EventStreamQuerystring, exclusiveStreamFilters } from '../../schemas/events.js'
import { errorResponses } from '../../schemas/responses.js'
import { directoryKeyOf } from '../auth/directory-key.js'
import { splitList } from '../http/list-parameter.js'
import { sendError } from '../http/replies.js'
import { askedEntities } from '../live/asked-entities.js'
import { messageFrame } from '../live/delivery-frames.js'
import { namedFrame, streamHead, StreamSubscriber } from '../live/stream-subscribers.js'
import type { Principal } from '../auth/principal.js'
import type { EventQuery } from '../store/event-store.js'
import { encodeMessage } from '../store/message-json.js'
import { waitForTurnBudget } from '../http/turn-budget.js'
import { dateRangeOf } from '../time/date-range.js'
import { EVENT_TIME_MAX_MS, formatEventTime, parseRfc3339 } from '../time/rfc3339.js'

export interface EventStreamOptions {
  retryAfterSeconds: number
}

/**
 * GET /svc/v2/events/stream: Server-Sent Events. The events endpoint's checks, in its order, then
 * (optionally) the stored events from start_date, then every accepted event that matches, live.
 * A client that reconnects with Last-Event-ID gets what it missed from the log instead.
 */
const eventStreamRoutes: FastifyPluginAsyncTypebox<EventStreamOptions> = async function (fastify, options) {
  fastify.get('/v2/events/stream', {
    schema: {
      querystring: EventStreamQuerystring,
      response: {
        200: Type.String({ description: 'text/event-stream: an item_errors event for unknown IDs, then a message event (id: cursor; in a start_date replay, cursor@date_time but for its last event) per event; a reset event when Last-Event-ID is older than what is kept, or left a replay before its end' }),
        ...errorResponses,
        403: ErrorObject,
        503: ErrorObject
      }
    },
    config: { queryRules: { exclusive: exclusiveStreamFilters }, stream: true }
  }, async function (request, reply) {
    // Streams opened once the turn's budget is spent wait in line for a later turn (turn-budget.ts): a
    // thousand opens of fifteen tags, about 1 ms each, were one turn of 976 ms.
    if (await waitForTurnBudget()) {
      fastify.providerMetrics.requestsDeferred.inc()
      if (request.raw.socket.destroyed) {
        reply.hijack()
        return
      }
      // The provider began to shut down meanwhile: its streams have ended.
      if (fastify.live.streams.ended) {
        reply.header('retry-after', String(options.retryAfterSeconds))
        return sendError(reply, 'service_unavailable')
      }
    }
    const parameters = request.query
    let startMs: number | undefined
    if (parameters.start_date !== undefined) {
      const range = dateRangeOf(parameters.start_date, undefined, Date.now())
      if (typeof range === 'string') return sendError(reply, range)
      startMs = range.startMs
    }
    // A replay reads the store: one that cannot answer now is a 503 before the stream starts, as
    // the events endpoint's (a Last-Event-ID, which takes precedence, reads only the log). Asked
    // first: from here to the stream's place among the subscribers nothing waits, so a reload of
    // the tokens or the registry meanwhile (which ends the streams it concerns) cannot miss it.
    const lastEventId = request.headers['last-event-id']
    const resuming = typeof lastEventId === 'string' && lastEventId !== ''
    if (startMs !== undefined && !resuming) {
      const health = await fastify.events.health()
      if (!health.ready) {
        request.log.warn({ reason: health.reason }, 'event store unavailable: a stream\'s replay refused')
        reply.header('retry-after', String(options.retryAfterSeconds))
        return sendError(reply, 'service_unavailable')
      }
      // Its client left meanwhile: its socket's close has been and gone, and a stream made now
      // would never be removed (its place, and its token's, taken for good).
      if (request.raw.socket.destroyed) {
        reply.hijack()
        return
      }
    }

    const { streams, log } = fastify.live
    if (streams.full) {
      reply.header('retry-after', String(options.retryAfterSeconds))
      return sendError(reply, 'service_unavailable')
    }
    // One consumer cannot take every place: beyond its share, its own streams are too many.
    if (streams.fullFor(request.principal.key)) {
      reply.header('retry-after', String(options.retryAfterSeconds))
      return sendError(reply, 'too_many_requests')
    }
    const tagIds = splitList(parameters.tag_ids)
    const { selection, errors, visible } = fastify.entityRegistry.resolve({
      deviceIds: splitList(parameters.device_ids),
      spaceIds: splitList(parameters.space_ids),
      tagIds
    }, request.principal.scope)
    const messageCodes = splitList(parameters.message_codes)
    const { filter, key } = streams.filters.shared({ entities: selection, scope: visible, category: parameters.message_category, messageCodes: messageCodes && new Set(messageCodes) })

    // A token of the directory is checked again while its stream is open (plugins/live-events.ts):
    // one replaced since this request was let in (a reload in between) is not let in.
    const directoryKey = directoryKeyOf(request)
    if (directoryKey !== undefined && fastify.tokens.byKey(directoryKey) !== request.principal) return sendError(reply, 'unauthorized_request')
    const opener = { directoryKey, principal: request.principal, asked: askedEntities(tagIds, errors) }

    // HEAD (Fastify answers it with this route): the stream's headers, and no stream.
    if (request.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache').header('x-accel-buffering', 'no').send('')

    // From here the stream writes to its socket itself (see streamHead).
    const head = streamHead(reply.getHeaders())
    reply.hijack()
    const socket = request.raw.socket
    socket.write(head)
    // A stream is quiet between events: the heartbeat, not the idle timeout, keeps it alive.
    socket.setTimeout(0)
    socket.setNoDelay(true)

    /** After a resume or replay: the events held meanwhile, then live. */
    const goLive = (stream: StreamSubscriber) => {
      if (stream.closed) return
      const held = stream.held ?? []
      stream.held = undefined
      stream.replayFrom = undefined
      let frame = ''
      for (const event of held) frame += messageFrame(log.cursorOf(event.seq), event.json)
      if (frame !== '') streams.write(stream, frame)
    }

    const stream = new StreamSubscriber(socket, filter, key, log.lastSeq, opener)
    // A token to check again (a JWT: every minute, and at its exp) is checked then: accepted, the
    // stream goes on until the next check; not (expired, its key withdrawn), the stream ends and
    // the client reconnects, to be let in or not.
    const expiry: { timer: NodeJS.Timeout | undefined } = { timer: undefined }
    const onCheck = (principal: Principal) => () => {
      if (principal.recheck === undefined) return streams.end(stream, 'its token expired')
      principal.recheck().then((now) => {
        if (stream.closed) return
        if (now === undefined) streams.end(stream, 'its token is no longer accepted')
        else armExpiry(expiry, now.expiresMs, onCheck(now))
      }, () => streams.end(stream, 'its token could not be checked again'))
    }
    armExpiry(expiry, request.principal.expiresMs, onCheck(request.principal))
    socket.once('close', () => {
      clearTimeout(expiry.timer)
      streams.remove(stream)
    })
    // A subscriber sends nothing after its request: its FIN means it is gone. The provider lets
    // connections stay half-open for the answers they are owed (src/http/half-open.ts); a stream, which
    // never finishes, ends here, as Node would end it, and its place is free at once.
    if (socket.readableEnded) socket.end()
    else socket.once('end', () => { socket.end() })
    if (errors.length > 0) streams.write(stream, namedFrame('item_errors', errors))

    if (resuming) {
      const { cursor, replayedTo } = resumePointOf(lastEventId)
      const resumed = log.resume(cursor, Date.now(), (message) => fastify.entityRegistry.knowsEntityOf(message) && stream.matches(message))
      if (replayedTo !== undefined) {
        // It left in its start_date replay: the rest of the replay was accepted before the cursor,
        // so no log holds it for the stream; the client backfills it with the events endpoint.
        const since = 'since' in resumed && Date.parse(resumed.since) < replayedTo ? resumed.since : formatEventTime(replayedTo)
        streams.write(stream, namedFrame('reset', { since }))
      } else if ('since' in resumed) {
        streams.write(stream, namedFrame('reset', { since: resumed.since }))
      }
      if ('since' in resumed) {
        streams.add(stream)
        return
      }
      // What it missed (a snapshot of the log, taken in this turn), then what came meanwhile
      // (held), then live: nothing falls in between, nothing comes twice.
      stream.held = []
      streams.add(stream)
      let frame = ''
      const owed = resumed.events
      while (!owed.done) {
        for (const event of owed.slice(RESUME_EVENTS_PER_TURN)) {
          if (stream.closed) return
          frame += messageFrame(log.cursorOf(event.seq), event.json)
          if (frame.length >= RESUME_CHUNK) {
            await streams.writeWaiting(stream, frame)
            frame = ''
          }
        }
        // A filter that keeps few events reads a long log without writing: other requests get
        // their turn between slices (a million events are some 0.65 s of reading).
        if (!owed.done) await nextTurn()
        if (stream.closed) return
      }
      if (frame !== '') await streams.writeWaiting(stream, frame)
      if (stream.closed) return
      if (resumed.events.overtaken) {
        streams.end(stream, 'the log dropped events its resume had yet to send')
        return
      }
      goLive(stream)
      return
    }
    if (startMs === undefined) {
      streams.add(stream)
      return
    }

    // The replay: live events wait (held) until the stored ones are written.
    stream.held = []
    stream.replayFrom = formatEventTime(startMs)
    streams.add(stream)
    const cursor = log.headCursor
    const query: EventQuery = { startMs, endMs: EVENT_TIME_MAX_MS, ...filter }
    // Each replayed event's id is the cursor and its date_time (how far the replay got, for a
    // client that drops in it), but the last one's is the cursor alone (it had everything): so an
    // event's frame is written once the next one is known, or the replay has ended.
    let last: { json: string, dateTime: string } | undefined
    try {
      for await (const batch of fastify.events.query(query)) {
        if (stream.closed) break
        let frame = ''
        let written: string | undefined
        const { messages, encoded } = batch
        for (let i = 0; i < messages.length; i++) {
          const message = messages[i]!
          // Already held: it comes live, after the replay.
          if (stream.heldIds.has(message.message_id)) continue
          // An ingest of this ID is on its way: sent now, since it is stored, and not again if that
          // ingest publishes it (one that finds it unchanged, or refuses it, never does; skipping it
          // here lost it: a client's retry during a replay was enough).
          if (fastify.live.isBeingWritten(message.message_id)) stream.replayedWhileWritten.add(message.message_id)
          const json = encoded === undefined
            ? encodeMessage(message)
            : encoded.bytes.toString('utf8', encoded.offsets[encoded.positions[i]!]!, encoded.offsets[encoded.positions[i]! + 1]!)
          if (last !== undefined) {
            frame += messageFrame(`${cursor}${REPLAYED_TO}${last.dateTime}`, last.json)
            written = last.dateTime
          }
          last = { json, dateTime: message.date_time }
        }
        if (frame !== '') {
          // Written from here on: a stream ended now says to backfill from the last of them.
          stream.replayFrom = written!
          await streams.writeWaiting(stream, frame)
        }
        // A turn of the event loop a batch: the memory store's batches are there at once, and a
        // client that reads fast enough is never waited for, so a replay of a year of a million
        // events held the event loop 0.25–2 s in one piece (an awaited batch is a microtask).
        await nextTurn()
      }
    } catch (error) {
      // The stream has begun: it says from when to backfill (a reset, from the last event it
      // got, or start_date), and ends cleanly, so that its client comes back.
      request.log.error({ err: error }, 'stream replay cut: the store failed')
      streams.end(stream, 'the store failed in its replay')
      return
    }
    if (last !== undefined && !stream.closed) {
      stream.replayFrom = last.dateTime
      await streams.writeWaiting(stream, messageFrame(cursor, last.json))
    }
    goLive(stream)
  })
}

/** Between a replayed event's cursor and its date_time, in its id. */
const REPLAYED_TO = '@'

/**
 * A Last-Event-ID's cursor and, for an event of a start_date replay (not its last), the instant
 * of that event (where the replay had got to). An id whose part after REPLAYED_TO is no date-time
 * is a cursor as it is (a foreign one, answered with a reset).
 */
function resumePointOf (lastEventId: string): { cursor: string, replayedTo?: number } {
  const at = lastEventId.indexOf(REPLAYED_TO)
  const instant = at === -1 ? undefined : parseRfc3339(lastEventId.slice(at + 1))
  return instant === undefined ? { cursor: lastEventId } : { cursor: lastEventId.slice(0, at), replayedTo: instant.epochMs }
}

/** setTimeout's longest delay: a later expiry is looked at again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

/** Sets `holder.timer` to call `onExpired` at `expiresMs` (none without one), re-armed past setTimeout's range; never keeps the process alive. */
function armExpiry (holder: { timer: NodeJS.Timeout | undefined }, expiresMs: number | undefined, onExpired: () => void): void {
  if (expiresMs === undefined) return
  const wait = expiresMs - Date.now()
  holder.timer = wait > LONGEST_TIMER_MS
    ? setTimeout(() => { armExpiry(holder, expiresMs, onExpired) }, LONGEST_TIMER_MS)
    : setTimeout(onExpired, Math.max(0, wait))
  holder.timer.unref()
}

/** Resumed events are written in chunks of about this many characters, each waiting for the reader. */
const RESUME_CHUNK = 64 * 1024

/** A resume reads this many of the log's events a turn at most, however few its filter keeps (about 0.7 ms). */
export const RESUME_EVENTS_PER_TURN = 1024

export default eventStreamRoutes
