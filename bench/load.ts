import autocannon from 'autocannon'

/** One fixed HTTP request, sent over and over. */
export interface LoadRequest {
  url: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
}

/** What one autocannon run saw: every response's latency, by status. */
export interface LoadSample {
  durationSec: number
  /** Milliseconds, sub-millisecond resolution (autocannon's own histogram keeps whole ms only). */
  latenciesMs: Float64Array
  statuses: Record<string, number>
  /** Connection errors and timeouts, as autocannon counts them. */
  errors: number
  timeouts: number
  bytes: number
}

export interface LoadOptions {
  connections: number
  durationSec: number
}

/** How long any load run waits for one answer before counting a timeout. */
export const REQUEST_TIMEOUT_SEC = 30

/** What every load run asks autocannon for: the request, connections, duration, the timeout. */
export function autocannonOptions (request: LoadRequest, options: LoadOptions): autocannon.Options {
  return {
    url: request.url,
    method: (request.method ?? 'GET') as autocannon.Request['method'],
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    connections: options.connections,
    duration: options.durationSec,
    timeout: REQUEST_TIMEOUT_SEC
  }
}

/**
 * Sends the request over options.connections connections for options.durationSec seconds and
 * records each response's status and latency (autocannon's 'response' event).
 */
export async function runLoad (request: LoadRequest, options: LoadOptions): Promise<LoadSample> {
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  let bytes = 0
  return new Promise<LoadSample>((resolve, reject) => {
    const instance = autocannon(autocannonOptions(request, options), (error, result) => {
      if (error !== null && error !== undefined) {
        reject(error)
        return
      }
      resolve({
        durationSec: result.duration,
        latenciesMs: Float64Array.from(latencies),
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        bytes
      })
    })
    instance.on('response', (_client: unknown, statusCode: number, responseBytes: number, responseTime: number) => {
      latencies.push(responseTime)
      bytes += responseBytes
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1
    })
  })
}
