import http, { type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import https from 'node:https'
import { promisify } from 'node:util'
import { gzip } from 'node:zlib'
import { createTextDecoderCombiner, type SendOptions, type Transport } from '@influxdata/influxdb-client'
import { StoreQueryError, StoreUnavailableError } from '../event-store.js'

const gzipAsync = promisify(gzip)

export interface InfluxRequest {
  method: 'GET' | 'POST'
  /** Path and query string. */
  path: string
  body?: string | Buffer
  headers?: Record<string, string>
}

/** A request on its way: its response once the headers arrive, and a way to end it early. */
interface Exchange {
  response: Promise<IncomingMessage>
  abort (): void
}

/** InfluxDB cannot answer now: the provider answers 503 and logs the message. The one way this folder makes one. */
export function unavailable (message: string, cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError(message, cause === undefined ? undefined : { cause })
}

/** InfluxDB's own words from an error answer: 1.x says `{"error"}`, 2.x `{"code","message"}`, a proxy anything. */
export function reasonOf (text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown, message?: unknown }
    if (typeof parsed.message === 'string') return parsed.message
    if (typeof parsed.error === 'string') return parsed.error
  } catch {}
  return text
}

/**
 * The one way this provider talks to InfluxDB, for both dialects: node:http over one pool of
 * kept-alive connections without Nagle's delay (no web-stream layer, and no gzip on answers,
 * which costs the provider more to inflate than the bytes cost to carry), one request path, and
 * one timeout rule: every wait for InfluxDB (for an answer to start, for its next chunk, for a
 * short exchange to finish) ends after `timeoutMs`, while the time a reader holds a chunk is
 * never counted. It is also the @influxdata/influxdb-client Transport its Flux query API runs
 * on, so that client is created once, on these same connections.
 */
export class InfluxTransport implements Transport {
  readonly chunkCombiner = createTextDecoderCombiner()
  readonly timeoutMs: number
  readonly #origin: string
  readonly #headers: Record<string, string>
  readonly #agent: http.Agent
  readonly #transport: typeof http | typeof https
  readonly #target: RequestOptions

  constructor (baseUrl: string, headers: Record<string, string>, timeoutMs: number) {
    const base = new URL(baseUrl)
    this.#origin = base.origin
    this.#headers = { 'accept-encoding': 'identity', ...headers }
    this.timeoutMs = timeoutMs
    const secure = base.protocol === 'https:'
    this.#transport = secure ? https : http
    // Agents set noDelay on their sockets by default (Node 20 and 24).
    this.#agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 128, maxFreeSockets: 32 })
    this.#target = {
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: base.port === '' ? undefined : Number(base.port),
      agent: this.#agent
    }
  }

  /**
   * A short exchange (a write, a ping, a statement): its status and whole answer as text, all
   * within the timeout. `what` names it in the error ("a write").
   */
  async exchange (request: InfluxRequest, what?: string): Promise<{ status: number, text: string }> {
    const exchange = this.#send(request)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      exchange.abort()
    }, this.timeoutMs)
    try {
      const response = await exchange.response
      const text = await readText(response)
      return { status: response.statusCode ?? 0, text }
    } catch (error) {
      throw this.#lost(error, timedOut, false, what)
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Writes line-protocol lines to `path` (1.x `/write`, 2.x `/api/v2/write`); throws with
   * InfluxDB's reason when it refuses them (StoreUnavailableError when the fault is InfluxDB's).
   * Bodies above `gzipAbove` bytes go compressed.
   */
  async writeLines (path: string, lines: readonly string[], gzipAbove = Infinity): Promise<void> {
    if (lines.length === 0) return
    const text = lines.join('\n')
    const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' }
    let body: string | Buffer = text
    if (Buffer.byteLength(text) > gzipAbove) {
      body = await gzipAsync(text)
      headers['content-encoding'] = 'gzip'
    }
    const { status, text: answer } = await this.exchange({ method: 'POST', path, body, headers }, 'a write')
    if (status === 204 || status === 200) return
    const message = `InfluxDB refused a write (${status}): ${reasonOf(answer)}`
    if (status >= 500) throw unavailable(message)
    throw new Error(message)
  }

  /** Resolves when InfluxDB answers its ping. */
  async ping (): Promise<void> {
    const { status } = await this.exchange({ method: 'GET', path: '/ping' })
    if (status !== 204 && status !== 200) throw unavailable(`InfluxDB ping answered ${status}`)
  }

  /**
   * A streamed answer, chunk by chunk as text, as InfluxDB sends it. Anything but 200 is
   * StoreUnavailableError with InfluxDB's reason. Each wait for InfluxDB is bounded by the timeout;
   * while a chunk is out with the reader the timer is off. A reader that leaves early (a client
   * went away) closes the connection, which makes InfluxDB stop the query; a finished answer leaves
   * its connection to be kept alive.
   */
  async * stream (request: InfluxRequest): AsyncGenerator<string> {
    const exchange = this.#send(request)
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    const arm = () => {
      timer = setTimeout(() => {
        timedOut = true
        exchange.abort()
      }, this.timeoutMs)
    }
    let answered = false
    let complete = false
    try {
      arm()
      let response: IncomingMessage
      try {
        response = await exchange.response
        if (response.statusCode !== 200) {
          const text = await readText(response)
          const message = `InfluxDB answered ${response.statusCode} to a query: ${reasonOf(text)}`
          // 400 is InfluxDB refusing the query itself (it could not parse it): ours to fix.
          if (response.statusCode === 400) throw new StoreQueryError(message)
          throw unavailable(message)
        }
      } catch (error) {
        throw this.#lost(error, timedOut, false)
      }
      response.setEncoding('utf8')
      const chunks = response[Symbol.asyncIterator]()
      for (;;) {
        let next: IteratorResult<string>
        try {
          next = await chunks.next()
        } catch (error) {
          throw this.#lost(error, timedOut, answered)
        }
        clearTimeout(timer)
        if (next.done === true) break
        answered = true
        yield next.value
        arm()
      }
      complete = true
    } finally {
      clearTimeout(timer)
      if (!complete) exchange.abort()
    }
  }

  /** The client library's streamed request (Flux queries): the same stream, as bytes. */
  async * iterate (path: string, body: unknown, options: SendOptions): AsyncIterableIterator<Uint8Array> {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (typeof value === 'string' && name.toLowerCase() !== 'accept-encoding') headers[name] = value
    }
    const method = options.method === 'GET' ? 'GET' : 'POST'
    for await (const chunk of this.stream({ method, path, body: typeof body === 'string' ? body : JSON.stringify(body), headers })) {
      yield Buffer.from(chunk)
    }
  }

  /** Not used: the provider reads Flux answers with `iterate`, and writes with `writeLines`. */
  send (): void {
    throw new Error('InfluxTransport.send is not used: Flux answers are read with iterate')
  }

  /** Not used, as `send`. */
  async request (): Promise<never> {
    throw new Error('InfluxTransport.request is not used: Flux answers are read with iterate')
  }

  close (): void {
    this.#agent.destroy()
  }

  /** The one request path: sends, and resolves with the response once its headers arrive. No timer: callers time their waits. */
  #send (request: InfluxRequest): Exchange {
    const headers: Record<string, string> = { ...this.#headers, ...request.headers }
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body))
    let sent: ClientRequest | undefined
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      sent = this.#transport.request({ ...this.#target, path: request.path, method: request.method, headers }, resolve)
      sent.on('error', reject)
      sent.end(request.body)
    })
    return { response, abort: () => sent?.destroy() }
  }

  /** What a failed wait means: InfluxDB too slow, gone mid-answer, or not there at all. */
  #lost (error: unknown, timedOut: boolean, answered: boolean, what?: string): Error {
    if (timedOut) {
      if (answered) return unavailable(`InfluxDB stopped answering for ${this.timeoutMs} ms`, error)
      return unavailable(`InfluxDB did not answer${what === undefined ? '' : ' ' + what} within ${this.timeoutMs} ms`, error)
    }
    if (error instanceof StoreUnavailableError || error instanceof StoreQueryError) return error
    if (answered) return unavailable('the connection to InfluxDB broke', error)
    return unavailable(`InfluxDB cannot be reached at ${this.#origin}`, error)
  }
}

/** The whole body of a short answer, as text. */
async function readText (response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8')
  let text = ''
  for await (const chunk of response) text += chunk as string
  return text
}
