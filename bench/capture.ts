import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { LoadRequest } from './load.js'

/** One answer, as the bytes that came over the wire (chunked framing removed). */
export interface Captured {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** Sends the request once with node:http, which shows the headers as sent (transfer-encoding included). */
export async function capture (request: LoadRequest): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(request.url, {
      method: request.method ?? 'GET',
      headers: request.headers ?? {},
      signal: AbortSignal.timeout(120_000)
    }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
    })
    outgoing.on('error', reject)
    outgoing.end(request.body)
  })
}

/** The number of events in an events answer (`{"data":[...],"errors":[...]}`), or undefined for another body. */
export function countEvents (body: Buffer): number | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { data?: unknown }
    return Array.isArray(parsed.data) ? parsed.data.length : undefined
  } catch {
    return undefined
  }
}
