/**
 * A piece of JSON text as UTF-8 bytes: bytes[start, end), usually a view into something larger
 * (a request body, a chunk of a file). An event's wire JSON travels this way from the line it
 * was read from to the stores, which copy it where it goes.
 *
 * Why bytes and not a string: an ingested line in wire form is already the bytes a store keeps
 * and appends. Made into a string, it was encoded back into bytes twice per event (the file's
 * line and the memory store's segment), a sixth of an ingest's time (BENCHMARKS.md, "What
 * profiling found"); a copy of the bytes costs a fraction of that. A string is made only where
 * one is needed (the live channels, and only while someone listens).
 */
export interface JsonBytes {
  readonly bytes: Buffer
  readonly start: number
  readonly end: number
}

/** The UTF-8 bytes of a JSON text, as JsonBytes of their own. */
export function jsonBytesOf (text: string): JsonBytes {
  const bytes = Buffer.from(text, 'utf8')
  return { bytes, start: 0, end: bytes.length }
}

/** The text of JSON bytes. */
export function jsonTextOf (json: JsonBytes): string {
  return json.bytes.toString('utf8', json.start, json.end)
}

/** Copies the bytes to target[at …] (the caller makes room); where they end there. */
export function copyJsonBytes (json: JsonBytes, target: Buffer, at: number): number {
  return at + json.bytes.copy(target, at, json.start, json.end)
}

/**
 * Pieces of JSON one after the other in one buffer, with a line break after each when
 * `lineBreaks` (an NDJSON file's lines), and their offsets: offsets[i] to offsets[i + 1] are
 * piece i's bytes (and its line break). `reuse`: a buffer to write into when it is large enough
 * (the bytes are then a view of it), so that a caller writing group after group does not have
 * the kernel fault in fresh pages for each.
 *
 * With line breaks, pieces that follow each other in one buffer with a line break between them
 * (the lines of one NDJSON body, as an ingest reads them) are copied in one piece: a copy costs
 * about as much whatever its size, and a body of 1,000 lines is one copy instead of 1,000.
 */
export function joinJsonBytes (pieces: ReadonlyArray<JsonBytes>, lineBreaks: boolean, reuse?: Buffer): { bytes: Buffer, offsets: Uint32Array } {
  const count = pieces.length
  const extra = lineBreaks ? 1 : 0
  let size = 0
  for (let i = 0; i < count; i++) size += pieces[i]!.end - pieces[i]!.start + extra
  const bytes = reuse !== undefined && reuse.length >= size ? reuse : Buffer.allocUnsafe(size)
  const offsets = new Uint32Array(count + 1)
  let at = 0
  for (let i = 0; i < count;) {
    const first = pieces[i]!
    if (!lineBreaks) {
      at = copyJsonBytes(first, bytes, at)
      offsets[++i] = at
      continue
    }
    // The pieces right after it in the same buffer, each after a line break.
    let end = first.end
    let next = i + 1
    while (next < count && pieces[next]!.bytes === first.bytes && pieces[next]!.start === end + 1 && first.bytes[end] === LINE_BREAK) end = pieces[next++]!.end
    at += first.bytes.copy(bytes, at, first.start, end)
    bytes[at++] = LINE_BREAK
    for (let offset = offsets[i]!; i < next; i++) {
      offset += pieces[i]!.end - pieces[i]!.start + 1
      offsets[i + 1] = offset
    }
  }
  return { bytes: bytes.subarray(0, at), offsets }
}

const LINE_BREAK = 0x0a
