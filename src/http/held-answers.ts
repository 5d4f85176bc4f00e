import { setImmediate as checkPhase } from 'node:timers/promises'
import type { Server } from 'node:http'
import type { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { hasRequestsWaiting } from './connection-turns.js'

/** Fastify's continuation of a send, after its onSend hooks: it writes the answer. */
export type WriteAnswer = (error?: Error | null) => void

/** Marks a reply whose answer is held and not yet let go (true), or let go to be written (false). */
const kHeld = Symbol('answer held')
/** Marks a reply whose answer is written as soon as it is sent (writeAtOnce). */
const kAtOnce = Symbol('answer written at once')
/** Marks a held reply whose answer is a served whole answer (servedAnswersHeld). */
const kServed = Symbol('served whole answer')
type HeldReply = FastifyReply & { [kHeld]?: boolean, [kAtOnce]?: boolean, [kServed]?: boolean }

/**
 * The answers held until the event loop has handled every request of their batch
 * (plugins/batched-writes.ts). One queue per process, as there is one event loop: the answers of
 * every Fastify instance in it go out together.
 */
let held: WriteAnswer[] = []
let heldReplies: HeldReply[] = []

/**
 * The turns of the event loop a batch may span. While each turn brings more answers (the
 * clients' next requests arriving as the loop reads), the batch waits one more turn for them,
 * up to this many: written once the clients have gone quiet, or after this many turns.
 *
 * Written at the end of each turn, a batch held about six of the small scenario's ten
 * connections' answers (5.9 on average); each batch's first write found the load generator asleep
 * and paid for waking it on the other CPU (in this virtual machine, an interrupt between
 * processors that the host handles: in a kernel profile, the wake-up's share per request was 2.6
 * times the framework ceiling's). Spanning the turns that keep bringing requests, a batch holds
 * about nine and wakes the client once for them: small/memory 70.6–72.1% -> 73.9–77.3% of the
 * framework ceiling, 1.7–2.5 µs less CPU a request (A/B runs in turns; BENCHMARKS.md, "What
 * profiling found"). Two or three turns without the condition did about as well; the bound keeps
 * a steady stream of requests from delaying an answer for more than a few turns' work.
 */
const MAX_BATCH_TURNS = 4

/**
 * Whole answers (a Buffer or a string: not the event stream's, not a streamed one, which are the
 * bulk work themselves) with a status below 400, held now, and when such answers were last
 * written (performance.now(); stamped once a batch, and at each answer written at once): the
 * long work's turns tell by them whether other consumers are being served (nextTurn).
 * Rejections do not count: a client sending bad tokens or parameters as fast as it can must not
 * slow another consumer's large answer.
 */
let servedAnswersHeld = 0
let servedAnswerWrittenMs = -Infinity

/** Whether the end of a turn is awaited for the held answers (at most one wait at a time). */
let turnAwaited = false
/** Turns the current batch has lasted, and how many answers it held at the end of the last one. */
let batchTurns = 0
let heldAtLastTurn = 0

function endOfTurn (): void {
  if (held.length === 0) {
    // Written meanwhile (by a large answer's next chunk, a client error, or writeAtOnce taking
    // the last one), and no new ones since: the next batch starts afresh.
    turnAwaited = false
    batchTurns = 0
    heldAtLastTurn = 0
    return
  }
  batchTurns++
  if (held.length > heldAtLastTurn && batchTurns < MAX_BATCH_TURNS) {
    heldAtLastTurn = held.length
    setImmediate(endOfTurn)
    return
  }
  turnAwaited = false
  writeHeldAnswers()
}

/**
 * Holds an answer until the end of its batch (MAX_BATCH_TURNS), or until writeHeldAnswers is
 * called before it.
 *
 * A held answer is not yet sent for Fastify (`reply.sent` is false until it is written), so that
 * a failure after the hold (a streamed answer's source failing before its first byte) still goes
 * to the error handler and is answered. A second send of a held reply is dropped, as Fastify
 * drops a send after the answer is written: silently when it has no payload (Fastify's own, for
 * an async handler that sent and then resolved without returning the reply), with Fastify's
 * warning otherwise (a hook that sent without returning the reply, and the handler ran after it).
 */
export function holdAnswer (reply: FastifyReply, payload: unknown, write: WriteAnswer): void {
  const heldReply = reply as HeldReply
  if (heldReply[kHeld] === true) {
    if (payload !== undefined) reply.log.warn(`Reply was already sent, did you forget to "return reply" in the "${reply.request.url}" (${reply.request.method}) route?`)
    if (isStream(payload)) payload.destroy()
    return
  }
  // A streamed answer is not sent for Fastify until its first byte, so an async handler that sent
  // and then resolved without returning the reply is sent again, with no payload, by Fastify:
  // written, that was an empty 200 in the stream's place (a black-box attacker's session,
  // 2026-11-28: events requests that waited for their turn, on pipelined connections). An
  // error's answer (its stream failed before its first byte) has a payload, and goes.
  if (payload === undefined && heldReply[kHeld] === false) return
  const served = (payload instanceof Uint8Array || typeof payload === 'string') && reply.statusCode < 400
  if (heldReply[kAtOnce] === true) {
    heldReply[kHeld] = false
    write()
    if (served) servedAnswerWrittenMs = performance.now()
    return
  }
  heldReply[kHeld] = true
  heldReply[kServed] = served
  if (served) servedAnswersHeld++
  if (!turnAwaited) {
    turnAwaited = true
    setImmediate(endOfTurn)
  }
  held.push(write)
  heldReplies.push(heldReply)
}

/**
 * The answer of this reply is written as soon as it is sent, and at once if it is held already:
 * a connection with requests pipelined behind this one (plugins/load-limits.ts runs them one at
 * a time, each once the answer before it is written). Held for a batch, each of their answers
 * would wait a batch of turns more, and a request Node cannot read that the client sent after
 * them (a malformed one, or one cut short by its half-close), read meanwhile, is answered 400 and
 * ends the connection before they have run (src/http/client-errors.ts).
 */
export function writeAtOnce (reply: FastifyReply): void {
  const heldReply = reply as HeldReply
  heldReply[kAtOnce] = true
  if (heldReply[kHeld] !== true) return
  const at = heldReplies.indexOf(heldReply)
  // Held, but no longer queued: writeHeldAnswers has taken its batch and writes it now.
  if (at === -1) return
  const write = held[at]!
  held.splice(at, 1)
  heldReplies.splice(at, 1)
  // The batch's count of answers at its last turn stays below what it holds now, or equal.
  if (heldAtLastTurn > held.length) heldAtLastTurn = held.length
  // Counted out before the write, which could reach writeHeldAnswers and its count.
  if (heldReply[kServed] === true) {
    servedAnswersHeld--
    servedAnswerWrittenMs = performance.now()
  }
  writeHeld(heldReply, write)
}

/** The held answers to this server's requests will end their connections (the server is closing), but those with requests waiting behind them. */
export function closeConnectionsOfHeldAnswers (server: Server): void {
  for (const reply of heldReplies) {
    if (reply.server.server === server && !hasRequestsWaiting(reply.raw.socket)) reply.raw.shouldKeepAlive = false
  }
}

function isStream (payload: unknown): payload is Readable {
  return typeof payload === 'object' && payload !== null && typeof (payload as Readable).pipe === 'function' && typeof (payload as Readable).destroy === 'function'
}

/**
 * Writes every held answer now, in the order they were held. The streaming of a large answer
 * calls it before each chunk's work (nextTurn), and an answer to a request Node could not read
 * before its own (src/http/client-errors.ts), so that the answers before it go first.
 */
export function writeHeldAnswers (): void {
  if (held.length === 0) return
  if (servedAnswersHeld !== 0) {
    servedAnswersHeld = 0
    servedAnswerWrittenMs = performance.now()
  }
  const writes = held
  const replies = heldReplies
  held = []
  heldReplies = []
  batchTurns = 0
  heldAtLastTurn = 0
  for (let i = 0; i < writes.length; i++) writeHeld(replies[i]!, writes[i]!)
}

function writeHeld (reply: HeldReply, write: WriteAnswer): void {
  // Let go before the write: an error the write runs into is answered by a send of its own.
  reply[kHeld] = false
  try {
    write()
  } catch (error) {
    // Written in its handler's turn, the failure (a header Node refuses, say) would have become
    // that route's; here the answer is lost, the other answers of the batch must still go out,
    // and its client must not wait for it.
    reply.log.error({ err: error }, 'an answer could not be written')
    reply.raw.destroy()
  }
}

/**
 * The turns a large answer's next chunk waits while other requests are being answered: at the
 * end of each turn that brought answers, they go out and the chunk waits one turn more, up to
 * this many. Beside a steady stream of small requests a large answer goes on at a chunk every few
 * turns; alone, or once the others go quiet, at a chunk a turn.
 *
 * The large answers' check (small requests' p99 beside two connections reading large answers,
 * against it alone): 3.46–3.79× (mean 3.68) at a chunk a turn, 2.54–3.89× (mean 3.21) with this,
 * four runs of three rounds each, in turns, and 2.72–2.80× in three runs more; the large answers
 * beside them 24.2 → 21.6 a second. In the full runs 4.06× → 3.49×, 23.6 → 19.0 large answers a
 * second; the framework ceiling, writing the large answer whole, 5.6× and 8.3× on the same check
 * (BENCHMARKS.md). One turn more at most did nothing; sixteen no better than four, as a turn
 * bringing no answer ends the wait first.
 */
const MAX_CHUNK_WAIT_TURNS = 4

/**
 * While other consumers are being served (served whole answers held, or written within the last
 * PACE_WINDOW_MS), a large answer's next chunk waits PACE_MS more: a streamed answer is bulk
 * work, and takes no more of the CPUs than a chunk every PACE_MS from the requests of other
 * clients: a plain answer's chunk is 32 KiB of JSON (at most some 16 MB a second an answer while
 * they last); a gzipped answer's is 32 KiB of JSON compressed as it goes, or a kept block of
 * 4,096 events already compressed (some 0.9 MB of JSON, which costs only its copy). Alone, or
 * once the others go quiet, it goes on at a chunk a turn, as fast as its reader takes it.
 *
 * What the small requests beside large answers waited for was the large answers' own pace: the
 * provider's work on their chunks and, on a machine shared with their reader, the reader's. The
 * large answers' check (small requests' p99 beside two connections reading 19 MB answers,
 * against it alone), the bench's rounds on two builds in turns (2026-12-01, four runs): 3.29–4.33×
 * at a chunk every few turns, 0.95–1.21× with this; the large answers beside them 20.9–22.7 →
 * 12.9–15.4 a second (BENCHMARKS.md, "What profiling found").
 */
const PACE_MS = 2
const PACE_WINDOW_MS = 5

/**
 * An event-loop turn for long work (a large answer's chunks): the held answers go out first, so
 * the small answers of a batch never wait for a chunk's work, and while turns keep bringing
 * answers the chunk waits for them (MAX_CHUNK_WAIT_TURNS), then PACE_MS more while other answers
 * are being served.
 */
export async function nextTurn (): Promise<void> {
  await turnAfterHeldAnswers()
  if (bulkWorkPaced()) {
    await new Promise((resolve) => { setTimeout(resolve, PACE_MS) })
    writeHeldAnswers()
  }
}

/** nextTurn without its pace: the turn after the held answers (MAX_CHUNK_WAIT_TURNS). */
export async function turnAfterHeldAnswers (): Promise<void> {
  await checkPhase()
  for (let turns = 0; turns < MAX_CHUNK_WAIT_TURNS && held.length > 0; turns++) {
    writeHeldAnswers()
    await checkPhase()
  }
  writeHeldAnswers()
}

/** Whether long work waits PACE_MS now: served whole answers are held, or were written within PACE_WINDOW_MS. */
export function bulkWorkPaced (): boolean {
  return servedAnswersHeld > 0 || performance.now() - servedAnswerWrittenMs < PACE_WINDOW_MS
}
