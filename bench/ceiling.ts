import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'
import { startNodeFlags } from './provider.js'
import { LOOPBACK } from './ports.js'
import { startChild, stopChild, type Child } from './processes.js'

/** A captured answer of the provider, to be served again by the framework ceiling. */
export interface CapturedReply {
  status: number
  contentType: string
  body: Buffer
  /**
   * The provider's other response headers (vary, etag, cache-control ...), sent as they are: the
   * load generator's work per answer depends on them (three headers of the specifications answer
   * halved autocannon's answers per second on one connection), so a ceiling without them would
   * measure the client, not the provider.
   */
  headers?: Record<string, string>
}

/** Headers the ceiling's own server writes (framing, connection, date), never replayed. */
const OWN_HEADERS = new Set(['content-type', 'content-length', 'transfer-encoding', 'date', 'connection', 'keep-alive'])

/** The headers of a captured answer to replay: every one but those the server writes itself. */
export function replayedHeaders (headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const replayed: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || OWN_HEADERS.has(name)) continue
    replayed[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return replayed
}

/** The parent's side of bench/ceiling-server.ts. */
export interface FrameworkCeiling {
  url: string
  pid: number
  /** Serves exactly these bytes from now on, to every URL (and forgets what serveAt gave). */
  serve (reply: CapturedReply): Promise<void>
  /** Serves these bytes to this one URL (path and query) as well, until the next serve. */
  serveAt (url: string, reply: CapturedReply): Promise<void>
  stop (): Promise<void>
}

export async function startFrameworkCeiling (scratchDir: string): Promise<FrameworkCeiling> {
  // The same node flags as the provider, so the two differ only in the work the provider does.
  const child: Child = startChild(process.execPath, [...startNodeFlags(), '--import', 'tsx', join(projectRoot, 'bench', 'ceiling-server.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  const ask = async <T>(wanted: (message: Record<string, unknown>) => boolean): Promise<T> => new Promise<T>((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (typeof message.error === 'string') {
        cleanup()
        reject(new Error(`the framework ceiling failed: ${message.error}`))
      } else if (wanted(message)) {
        cleanup()
        resolve(message as T)
      }
    }
    const onExit = () => {
      cleanup()
      reject(new Error(`the framework ceiling exited: ${child.output()}`))
    }
    const cleanup = () => {
      child.process.off('message', onMessage)
      child.process.off('exit', onExit)
    }
    child.process.on('message', onMessage)
    child.process.on('exit', onExit)
  })
  const { port } = await ask<{ port: number }>((message) => typeof message.port === 'number')
  const file = join(scratchDir, `ceiling-body-${process.pid}`)
  const send = async (reply: CapturedReply, url?: string): Promise<void> => {
    await writeFile(file, reply.body)
    const serving = ask((message) => message.serving === true)
    child.process.send({ file, status: reply.status, contentType: reply.contentType, headers: reply.headers ?? {}, ...(url === undefined ? {} : { url }) })
    await serving
  }
  return {
    url: `http://${LOOPBACK}:${port}`,
    pid: child.pid,
    serve: async (reply) => { await send(reply) },
    serveAt: async (url, reply) => { await send(reply, url) },
    stop: () => stopChild(child)
  }
}
