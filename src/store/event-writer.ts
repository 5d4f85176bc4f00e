import type { StoredEvent } from '../data/event-lines.js'
import type { JsonBytes } from '../data/json-bytes.js'

/** One event to ingest, with the line it came from, for the report. */
export interface IngestEvent {
  event: StoredEvent
  line: number
  /**
   * The event's wire JSON (what encodeMessage writes) as UTF-8 bytes, made once when the line was
   * read: the line's own bytes when it already is (scanWireLine). Stores append it, index it and
   * publish it as it is, instead of serialising the event again.
   */
  json: JsonBytes
}

export interface IngestRefusal {
  line: number
  reason: string
}

export interface WriteOutcome {
  /** Events stored by this call. */
  written: number
  /** Events the store already held, identical: nothing to do (re-ingesting is idempotent). */
  unchanged: number
  /** Events not stored, with why (a message_id already stored for a different event). */
  refused: IngestRefusal[]
  /** The events stored by this call (`written` of them), for the live channels. */
  stored: IngestEvent[]
}

/** What `npm run ingest` writes through; each store that can be ingested into implements it. */
export interface EventWriter {
  prepareForWrites (): Promise<void>
  writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome>
  close (): Promise<void>
}
