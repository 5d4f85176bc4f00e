import http, { type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import https from 'node:https'
import { StoreUnavailableError } from '../event-store.js'

/** A request on its way: its response once the headers arrive, and a way to end it early. */
export interface PendingExchange {
  response: Promise<IncomingMessage>
  abort (): void
}

export interface InfluxRequest {
  method: 'GET' | 'POST'
  path: string
  query?: Record<string, string>
  body?: string
  contentType?: string
}

/**
 * HTTP to InfluxDB over kept-alive connections (node:http: no web-stream layer in between, and
 * no gzip, which costs the provider more to inflate than the bytes cost to carry).
 */
export class InfluxHttp {
  readonly #base: URL
  readonly #headers: Record<string, string>
  readonly #timeoutMs: number
  readonly #agent: http.Agent
  readonly #transport: typeof http | typeof https
  readonly #target: RequestOptions
  readonly #formHeaders: Record<string, string>

  constructor (baseUrl: string, headers: Record<string, string>, timeoutMs: number) {
    this.#base = new URL(baseUrl)
    this.#headers = { 'accept-encoding': 'identity', ...headers }
    this.#formHeaders = { ...this.#headers, 'content-type': 'application/x-www-form-urlencoded' }
    this.#timeoutMs = timeoutMs
    const secure = this.#base.protocol === 'https:'
    this.#transport = secure ? https : http
    this.#agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 128, maxFreeSockets: 32, noDelay: true })
    this.#target = {
      protocol: this.#base.protocol,
      hostname: this.#base.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: this.#base.port === '' ? undefined : Number(this.#base.port),
      agent: this.#agent
    }
  }

  get timeoutMs (): number {
    return this.#timeoutMs
  }

  /**
   * Resolves with the response once its headers arrive; the caller reads (or discards) its body.
   * The whole exchange, body included, must end within the timeout.
   */
  request (options: InfluxRequest): Promise<IncomingMessage> {
    const path = options.query === undefined ? options.path : `${options.path}?${new URLSearchParams(options.query)}`
    const signal = AbortSignal.timeout(this.#timeoutMs)
    const headers: Record<string, string> = { ...this.#headers }
    if (options.contentType !== undefined) headers['content-type'] = options.contentType
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body))
    return new Promise((resolve, reject) => {
      const request = this.#transport.request({ ...this.#target, path, method: options.method, headers, signal }, resolve)
      request.on('error', (error) => {
        reject(signal.aborted
          ? new StoreUnavailableError(`InfluxDB did not answer within ${this.#timeoutMs} ms`, { cause: error })
          : new StoreUnavailableError(`InfluxDB cannot be reached at ${this.#base.origin}`, { cause: error }))
      })
      request.end(options.body)
    })
  }

  /**
   * POSTs a form to `path` with no timeout of its own: the caller times its waits and calls
   * `abort()` (also when it stops reading early). Cheaper per call than `request`: the target and
   * headers are fixed once, and no AbortSignal is wired into the request.
   */
  post (path: string, form: string): PendingExchange {
    const headers = { ...this.#formHeaders, 'content-length': String(Buffer.byteLength(form)) }
    let request: ClientRequest | undefined
    const response = new Promise<IncomingMessage>((resolve, reject) => {
      request = this.#transport.request({ ...this.#target, path, method: 'POST', headers }, resolve)
      request.on('error', (error) => reject(new StoreUnavailableError(`InfluxDB cannot be reached at ${this.#base.origin}`, { cause: error })))
      request.end(form)
    })
    return { response, abort: () => request?.destroy() }
  }

  close (): void {
    this.#agent.destroy()
  }
}

/** The whole body of a short answer, as text. */
export async function readText (response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8')
  let text = ''
  for await (const chunk of response) text += chunk as string
  return text
}
