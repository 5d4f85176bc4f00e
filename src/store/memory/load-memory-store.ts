import { isUtf8 } from 'node:buffer'
import { stat } from 'node:fs/promises'
import { irregularFileReason } from '../../data/regular-file.js'
import { DataFileError } from '../../data/data-file-error.js'
import { NOT_UTF8, parseEventLine } from '../../data/event-lines.js'
import { forEachLine, lineText } from '../../data/file-lines.js'
import { scanWireParts, type WireParts } from '../../data/wire-line.js'
import { isCutShortLine } from './events-file-appender.js'
import { MemoryEventStore, type TornTail } from './memory-event-store.js'
import { SegmentBuilder } from './segment-builder.js'

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
  const started = performance.now()
  let builder: SegmentBuilder
  let tornTail: TornTail | undefined
  let loadedBytes: number
  try {
    const stats = await stat(file)
    // Not waited on (regular-file.ts): a named pipe would hold the start-up for good.
    const irregular = irregularFileReason(stats)
    if (irregular !== undefined) throw new Error(irregular)
    builder = new SegmentBuilder(stats.size)
    // A line in wire form is scanned once, as the lines are cut: its scan finds its end (no
    // search for it) and is what the handler below reads, for the line it has just been given.
    // A million events loaded in 1.17–1.22 s against 1.27–1.31, the main thread's user time
    // 0.95–1.03 s against 1.06–1.10 (scratch, 2026-11-27; BENCHMARKS.md).
    let scannedBytes: Buffer | undefined
    let scannedStart = -1
    let scannedParts: WireParts | undefined
    const wireLineEnd = (bytes: Buffer, start: number, limit: number): number => {
      scannedBytes = bytes
      scannedStart = start
      scannedParts = scanWireParts(bytes, start, limit, true)
      return scannedParts === undefined ? -1 : scannedParts.end
    }
    loadedBytes = await forEachLine(file, (line, bytes, start, end, unterminatedAt) => {
      if (line % progressEvery === 0) onProgress?.({ lines: line, seconds: (performance.now() - started) / 1000 })
      // A line in wire form (the usual case) is checked from its bytes and kept as they are,
      // its message made when an answer reads it; any other is read the thorough way, which
      // also says what is wrong with a bad one.
      const wire = scannedBytes === bytes && scannedStart === start && scannedParts !== undefined && scannedParts.end === end
        ? scannedParts
        : scanWireParts(bytes, start, end)
      if (wire === undefined && unterminatedAt !== undefined && isCutShortLine(lineText(bytes, start, end))) {
        // The file's last bytes, no line break after them, the beginning of a JSON line and not
        // a whole one: what a crash leaves of an append it cut short (the provider writes whole
        // lines, each ending in a line break, and acknowledges none before its write returned).
        // Never acknowledged, so not an event: skipped, and cut off the file before the next
        // append (events-file-appender.ts). Any other bad line stops the load, as always.
        tornTail = { line, offset: unterminatedAt, bytes: end - start }
        return
      }
      let problem: string | undefined
      if (wire !== undefined) {
        problem = builder.addWire(bytes, start, end, wire, line)
      } else if (!isUtf8(bytes.subarray(start, end))) {
        throw new DataFileError(file, `line ${line}`, NOT_UTF8)
      } else {
        const parsed = parseEventLine(lineText(bytes, start, end), line)
        if (parsed === undefined) return
        if ('problem' in parsed) throw new DataFileError(file, `line ${line}`, parsed.problem)
        problem = builder.add(parsed.event.message, parsed.event.epochMs, parsed.json, line)
      }
      if (problem !== undefined) throw new DataFileError(file, `line ${line}`, problem)
    }, undefined, 0, (bytes) => builder.beforeLines(bytes), wireLineEnd)
  } catch (error) {
    if (error instanceof DataFileError) throw error
    throw new DataFileError(file, 'cannot be read', (error as Error).message)
  }
  return new MemoryEventStore(builder.build(), file, { bytes: tornTail?.offset ?? loadedBytes, tornTail })
}
