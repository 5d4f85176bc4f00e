import { createReadStream, existsSync } from 'node:fs'
import { appendFile, open } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import type { Message } from '../../../schemas/message.js'
import { sameEvent } from '../../data/event-lines.js'
import type { EventWriter, IngestEvent, WriteOutcome } from '../event-writer.js'

/**
 * Ingest for STORE=memory: the memory store's durable form is EVENTS_FILE, so new events are
 * appended to it (in wire form, UTC date_time) and the provider serves them on its next start.
 * Events already in the file are unchanged; a message_id already used for another event is refused.
 */
export class MemoryEventWriter implements EventWriter {
  readonly #file: string
  readonly #known = new Map<string, Message>()
  /** The file ends without a line break (written by hand, or by another tool): the first append starts one. */
  #endsMidLine = false

  constructor (file: string) {
    this.#file = file
  }

  async prepareForWrites (): Promise<void> {
    if (!existsSync(this.#file)) return
    this.#endsMidLine = await endsMidLine(this.#file)
    const lines = createInterface({ input: createReadStream(this.#file, { encoding: 'utf8' }), crlfDelay: Infinity })
    for await (const text of lines) {
      if (text.trim() === '') continue
      // The provider validates the file at start-up; here only the IDs already taken matter.
      const message = JSON.parse(text) as Message
      this.#known.set(message.message_id, message)
    }
  }

  async writeEvents (events: readonly IngestEvent[]): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { written: 0, unchanged: 0, refused: [] }
    let text = ''
    for (const { event: { message }, line } of events) {
      const known = this.#known.get(message.message_id)
      if (known === undefined) {
        this.#known.set(message.message_id, message)
        text += JSON.stringify(message) + '\n'
        outcome.written++
      } else if (sameEvent(known, normalized(known, message))) {
        outcome.unchanged++
      } else {
        outcome.refused.push({ line, reason: `message_id ${JSON.stringify(message.message_id)} is already stored for a different event` })
      }
    }
    if (text !== '') {
      await appendFile(this.#file, this.#endsMidLine ? '\n' + text : text, 'utf8')
      this.#endsMidLine = false
    }
    return outcome
  }

  async close (): Promise<void> {}
}

/** Whether a non-empty file's last byte is not a line break. */
async function endsMidLine (file: string): Promise<boolean> {
  const handle = await open(file, 'r')
  try {
    const { size } = await handle.stat()
    if (size === 0) return false
    const last = Buffer.alloc(1)
    await handle.read(last, 0, 1, size - 1)
    return last[0] !== 0x0a
  } finally {
    await handle.close()
  }
}

/** Lines already in the file may carry date_time in another offset: compare instants, not text. */
function normalized (known: Message, message: Message): Message {
  return Date.parse(known.date_time) === Date.parse(message.date_time) ? { ...message, date_time: known.date_time } : message
}
