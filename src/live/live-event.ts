import type { Message } from '../../schemas/message.js'

/** An event the provider accepted, as the live channels carry it. */
export interface LiveEvent {
  /** Its place in the provider's order of acceptance (the stream's cursor names it). */
  readonly seq: number
  readonly message: Message
  /** Its wire JSON, byte for byte as the events endpoint serves it. */
  readonly json: string
}

/** Where an accepted event comes from, as a process of the provider sees it. */
export type LiveSource =
  /** This process accepted it (and its store already serves it). */
  | 'this-process'
  /** Another worker of this provider accepted it, into the same store. */
  | 'this-provider'
  /** Another provider instance accepted it (heard on the MQTT bus): pushed, not stored here. */
  | 'another-provider'
