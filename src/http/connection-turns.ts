import type { Socket } from 'node:net'
import type { FastifyReply } from 'fastify'

/**
 * The requests of one connection: the one being answered, and those pipelined behind it
 * (plugins/load-limits.ts runs them one at a time).
 */
export interface ConnectionTurns {
  busy: boolean
  /** The reply of the request that has the turn. */
  current: FastifyReply | undefined
  waiting: Array<() => void>
}

export const kTurns = Symbol('pipelined requests')
export type TurnSocket = Socket & { [kTurns]?: ConnectionTurns }

/**
 * Whether requests wait on this connection behind the one being answered: its answer must not
 * end the connection (a shutdown's `Connection: close`), or they would go unanswered.
 */
export function hasRequestsWaiting (socket: Socket | null): boolean {
  const turns = (socket as TurnSocket | null)?.[kTurns]
  return turns !== undefined && turns.waiting.length > 0
}
