import { readEventLines } from '../data/event-lines.js'
import type { EventWriter, IngestEvent, IngestRefusal } from '../store/event-writer.js'

export interface IngestSummary {
  lines: number
  written: number
  unchanged: number
  /** Lines not written, in line order: invalid ones and those the store refused. */
  refused: IngestRefusal[]
}

export interface IngestOptions {
  batchSize?: number
  onProgress?: (summary: Readonly<IngestSummary>) => void
}

/**
 * Reads an NDJSON file line by line, checks each line with the message schema and writes the
 * valid events in batches. A bad line is refused whole, never half-written; the rest go on.
 */
export async function ingestFile (file: string, writer: EventWriter, options: IngestOptions = {}): Promise<IngestSummary> {
  const batchSize = options.batchSize ?? 5000
  const summary: IngestSummary = { lines: 0, written: 0, unchanged: 0, refused: [] }
  await writer.prepareForWrites()
  let batch: IngestEvent[] = []
  const flush = async () => {
    if (batch.length === 0) return
    const outcome = await writer.writeEvents(batch)
    summary.written += outcome.written
    summary.unchanged += outcome.unchanged
    summary.refused.push(...outcome.refused)
    batch = []
    options.onProgress?.(summary)
  }
  for await (const parsed of readEventLines(file)) {
    summary.lines = parsed.line
    if ('problem' in parsed) {
      summary.refused.push({ line: parsed.line, reason: parsed.problem })
      continue
    }
    batch.push({ event: parsed.event, line: parsed.line, json: parsed.json })
    if (batch.length >= batchSize) await flush()
  }
  await flush()
  summary.refused.sort((a, b) => a.line - b.line)
  return summary
}
