import { request, type ClientRequest, type IncomingMessage } from 'node:http'

/** One frame of an event stream, as a client reads it. */
export interface SseFrame {
  id?: string
  event?: string
  data?: string
  comment?: string
}

/** A real HTTP client reading a provider's event stream frame by frame (node:http, no library). */
export class SseClient {
  readonly frames: SseFrame[] = []
  status = 0
  headers: IncomingMessage['headers'] = {}
  body = ''
  ended = false
  readonly #request: ClientRequest
  #buffer = ''
  #waiters: Array<() => void> = []

  constructor (url: string, headers: Record<string, string>) {
    this.#request = request(url, { headers: { accept: 'text/event-stream', ...headers } })
    this.#request.on('response', (response) => {
      this.status = response.statusCode ?? 0
      this.headers = response.headers
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        this.body += chunk
        this.#buffer += chunk
        let end
        while ((end = this.#buffer.indexOf('\n\n')) !== -1) {
          this.frames.push(parseFrame(this.#buffer.slice(0, end)))
          this.#buffer = this.#buffer.slice(end + 2)
        }
        this.#wake()
      })
      response.on('end', () => { this.ended = true; this.#wake() })
      response.on('error', () => { this.ended = true; this.#wake() })
      this.#wake()
    })
    this.#request.on('error', () => { this.ended = true; this.#wake() })
    this.#request.end()
  }

  /** The message events read so far. */
  get messages (): SseFrame[] {
    return this.frames.filter((frame) => frame.event === 'message')
  }

  /** Resolves once `done` holds (checked on every chunk), or rejects after `ms`. */
  async until (done: (client: SseClient) => boolean, ms = 5000, what = 'the stream'): Promise<void> {
    const deadline = Date.now() + ms
    while (!done(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50)
        this.#waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }

  close (): void {
    this.#request.destroy()
  }

  #wake (): void {
    const waiters = this.#waiters
    this.#waiters = []
    for (const wake of waiters) wake()
  }
}

function parseFrame (text: string): SseFrame {
  const frame: SseFrame = {}
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(':')
      const field = line.slice(0, colon)
      const value = line.slice(colon + 1).replace(/^ /, '')
      if (field === 'id' || field === 'event') frame[field] = value
      else if (field === 'data') frame.data = frame.data === undefined ? value : frame.data + '\n' + value
    }
  }
  return frame
}
