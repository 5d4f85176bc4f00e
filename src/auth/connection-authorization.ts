import type { Socket } from 'node:net'
import type { Principal } from './principal.js'

/**
 * What the last request of a connection was let in as, by its Authorization header: a client on
 * a kept-alive connection sends the same header with every request, and looking its token up
 * again (a SHA-256 digest, then the directory) was about 2 µs of a small request's CPU, and most
 * of a refused one's (BENCHMARKS.md, "What profiling found"). Only tokens of the directory are
 * remembered (a JWT is checked every time: it expires), only until the directory changes
 * (`generation`), and headers are compared in constant time: behind a proxy that pools its
 * connections, the last request may have been another client's.
 */
interface LastAuthorization {
  header: string
  generation: number
  /** undefined: the token was not known. */
  principal: Principal | undefined
}

const kLastAuthorization = Symbol('the last Authorization of the connection')
type RememberingSocket = Socket & { [kLastAuthorization]?: LastAuthorization }

/** Not remembered: look the token up. */
export const NOT_REMEMBERED = Symbol('not remembered')

/** Who this header was let in as on this connection, undefined if not known, or NOT_REMEMBERED. */
export function rememberedPrincipal (socket: Socket | null, header: string, generation: number): Principal | undefined | typeof NOT_REMEMBERED {
  const last = (socket as RememberingSocket | null)?.[kLastAuthorization]
  if (last === undefined || last.generation !== generation || !sameText(last.header, header)) return NOT_REMEMBERED
  return last.principal
}

export function rememberPrincipal (socket: Socket | null, header: string, generation: number, principal: Principal | undefined): void {
  if (socket === null) return
  const remembering = socket as RememberingSocket
  const last = remembering[kLastAuthorization]
  if (last === undefined) {
    remembering[kLastAuthorization] = { header, generation, principal }
    return
  }
  last.header = header
  last.generation = generation
  last.principal = principal
}

/** Whether two texts are the same, in a time that depends on their lengths only. */
export function sameText (a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
