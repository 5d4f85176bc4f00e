import { existsSync } from 'node:fs'
import type { Message } from '../../../schemas/message.js'
import { sameEvent } from '../../data/event-lines.js'
import { forEachLine, lineText } from '../../data/file-lines.js'
import { joinJsonBytes, type JsonBytes } from '../../data/json-bytes.js'
import type { EventWriter, IngestEvent, WriteOutcome } from '../event-writer.js'
import { EventsFileAppender, isCutShortLine } from './events-file-appender.js'

/**
 * Ingest for STORE=memory: the memory store's durable form is EVENTS_FILE, so new events are
 * appended to it (in wire form, UTC date_time) and the provider serves them on its next start.
 * Events already in the file are unchanged; a message_id already used for another event is refused.
 */
export class MemoryEventWriter implements EventWriter {
  readonly #file: string
  readonly #known = new Map<string, Message>()
  readonly #appender: EventsFileAppender

  readonly #prepareFile: () => Promise<void>

  /** `prepareFile` makes sure the file is where it should be (the demo's working copy) before it is read. */
  constructor (file: string, prepareFile: () => Promise<void> = async () => {}) {
    this.#file = file
    this.#appender = new EventsFileAppender(file)
    this.#prepareFile = prepareFile
  }

  async prepareForWrites (): Promise<void> {
    await this.#prepareFile()
    if (!existsSync(this.#file)) return
    await forEachLine(this.#file, (_line, bytes, start, end, unterminatedAt) => {
      const text = lineText(bytes, start, end)
      if (text.trim() === '') return
      // The provider validates the file at start-up; here only the IDs already taken matter.
      let message: Message
      try {
        message = JSON.parse(text) as Message
      } catch (error) {
        // What a crash left of an append, as the provider's load skips it (load-memory-store.ts);
        // the append cuts it off (events-file-appender.ts).
        if (unterminatedAt !== undefined && isCutShortLine(text)) return
        throw error
      }
      this.#known.set(message.message_id, message)
    })
  }

  async writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { written: 0, unchanged: 0, refused: [], stored: [] }
    const lines: JsonBytes[] = []
    for (const ingest of events) {
      const { event: { message }, line } = ingest
      const known = this.#known.get(message.message_id)
      if (known === undefined) {
        this.#known.set(message.message_id, message)
        lines.push(ingest.json)
        outcome.written++
        outcome.stored.push(ingest)
      } else if (sameEvent(known, normalized(known, message))) {
        outcome.unchanged++
      } else {
        outcome.refused.push({ line, reason: `message_id ${JSON.stringify(message.message_id)} is already stored for a different event` })
      }
    }
    await this.#appender.append(joinJsonBytes(lines, true).bytes)
    return outcome
  }

  async close (): Promise<void> {
    await this.#appender.close()
  }
}

/** Lines already in the file may carry date_time in another offset: compare instants, not text. */
function normalized (known: Message, message: Message): Message {
  return Date.parse(known.date_time) === Date.parse(message.date_time) ? { ...message, date_time: known.date_time } : message
}
