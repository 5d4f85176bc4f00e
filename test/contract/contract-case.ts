import type { ItemError } from '../../schemas/events.js'
import type { ErrorCodeName } from '../../schemas/error.js'

/** One request and what any store must answer to it, on the fixtures in test/fixtures. */
export interface ContractCase {
  name: string
  /** Path and raw query string, sent as is. */
  url: string
  /** Defaults to a valid bearer token; null sends no Authorization header. */
  authorization?: string | null
  headers?: Record<string, string>
  /** An error answer: its status follows from the code. */
  error?: ErrorCodeName
  /** A 200 answer from the events endpoint: the message_ids in order, and the item errors. */
  ids?: string[]
  errors?: ItemError[]
  /** The exact body text, where the wire form itself is under test. */
  body?: string
  /** A 200 answer from the specifications endpoint: the codes in order with their detail languages. */
  specifications?: Array<[code: string, languages: string[]]>
}

export const q = encodeURIComponent
