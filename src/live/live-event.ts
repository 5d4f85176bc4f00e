import type { Message } from '../../schemas/message.js'
import type { JsonBytes } from '../data/json-bytes.js'

/** An event the provider accepted, as the live channels carry it. */
export interface LiveEvent {
  /** Its place in the provider's order of acceptance (the stream's cursor names it). */
  readonly seq: number
  readonly message: Message
  /** Its wire JSON, byte for byte as the events endpoint serves it. */
  readonly json: string
  /** Its time (its date_time's), when the event has it at hand: read instead of the message. */
  readonly epochMs?: number | undefined
  /** Its wire JSON as bytes, when the event came with them (an ingest's): read instead of `json`. */
  readonly bytes?: JsonBytes | undefined
}

/** Where an accepted event comes from, as a process of the provider sees it. */
export type LiveSource =
  /** This process accepted it (and its store already serves it). */
  | 'this-process'
  /** Another worker of this provider accepted it, into the same store. */
  | 'this-provider'
  /** Another provider instance accepted it (heard on the MQTT bus): pushed, not stored here. */
  | 'another-provider'
