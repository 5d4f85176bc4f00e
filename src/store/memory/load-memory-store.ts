import { DataFileError } from '../../data/data-file-error.js'
import { readEventLines, sameEvent, type StoredEvent } from '../../data/event-lines.js'
import { MemoryEventStore } from './memory-event-store.js'

/**
 * Loads EVENTS_FILE into a MemoryEventStore. The first bad line stops the load, naming the line.
 * A message_id seen again with identical fields is the same event and is kept once; with other
 * fields it is a conflict, since an event's ID is its identity.
 */
export interface LoadProgress {
  /** Lines read so far. */
  lines: number
  /** Seconds since the load began. */
  seconds: number
}

/** Progress is reported every this many lines (a million-event file: ten reports). */
export const PROGRESS_EVERY_LINES = 100_000

export async function loadMemoryEventStore (file: string, onProgress?: (progress: LoadProgress) => void, progressEvery = PROGRESS_EVERY_LINES): Promise<MemoryEventStore> {
  const events = new Map<string, { event: StoredEvent, line: number }>()
  const started = performance.now()
  try {
    for await (const parsed of readEventLines(file)) {
      if (parsed.line % progressEvery === 0) onProgress?.({ lines: parsed.line, seconds: (performance.now() - started) / 1000 })
      if ('problem' in parsed) throw new DataFileError(file, `line ${parsed.line}`, parsed.problem)
      const id = parsed.event.message.message_id
      const earlier = events.get(id)
      if (earlier === undefined) {
        events.set(id, { event: parsed.event, line: parsed.line })
      } else if (!sameEvent(earlier.event.message, parsed.event.message)) {
        throw new DataFileError(file, `line ${parsed.line}`, `message_id ${JSON.stringify(id)} was already used by line ${earlier.line} for a different event`)
      }
    }
  } catch (error) {
    if (error instanceof DataFileError) throw error
    throw new DataFileError(file, 'cannot be read', (error as Error).message)
  }
  return new MemoryEventStore([...events.values()].map(({ event }) => event), file)
}
