import { open } from 'node:fs/promises'
import { CR, LF } from './char-codes.js'

/** Bytes read at a time: large enough that reading costs nothing beside the lines' own work. */
const CHUNK_BYTES = 4 * 1024 * 1024

/**
 * A line's 1-based number, and where its bytes are: `bytes` from `start` to `end`, valid during
 * the call only (the buffer is reused for the next chunk). Its text is the handler's to decode
 * (lineText), when it needs it: a line read from its bytes needs none.
 */
export type LineHandler = (line: number, bytes: Buffer, start: number, end: number, unterminatedAt?: number) => void

/**
 * Where the line starting at bytes[start] ends (the index of the line break after it), when the
 * caller can tell from the line itself (its own scan of a line in a known form), or -1; `limit`:
 * the end of the bytes read so far. A line it ends is handed out without a search for its end
 * (Buffer#indexOf is a call into C++ for every line). It must never end a line past a line break:
 * the form it knows has none inside a line.
 */
export type LineEndFinder = (bytes: Buffer, start: number, limit: number) => number

/** A line's text (UTF-8; an invalid sequence becomes U+FFFD). */
export function lineText (bytes: Buffer, start: number, end: number): string {
  return bytes.toString('utf8', start, end)
}

/**
 * Calls onLine for every line of a UTF-8 text file, with its 1-based number, as node:readline
 * gives them (`crlfDelay: Infinity`): a line ends at `\n`, `\r\n` or a lone `\r`, and a last line
 * without an end counts. Read in large chunks and cut with indexOf: for a million short lines,
 * readline's per-line events, and a promise per line of an async iterator, cost as much as
 * parsing them (BENCHMARKS.md, "Loading"). A line never lives longer than its callback. A last
 * line without an end is also given its place in the file (`unterminatedAt`, its first byte's
 * offset): it may be an append cut short.
 * `chunkBytes` is for tests of lines across chunks. `from`: the offset to start at (line numbers
 * then count from there). `beforeChunk` is told how many bytes of lines are about to be handed
 * out before each chunk's lines are, and may hold them back (a promise) until it is ready for them.
 * `lineEnd`: see LineEndFinder.
 * Resolves with the offset of the end of what was read.
 */
export async function forEachLine (file: string, onLine: LineHandler, chunkBytes = CHUNK_BYTES, from = 0, beforeChunk?: (bytes: number) => Promise<void> | undefined, lineEnd?: LineEndFinder): Promise<number> {
  const handle = await open(file, 'r')
  try {
    let buffer = Buffer.allocUnsafe(chunkBytes)
    // Bytes at the start of buffer left from the last chunk: a line not yet ended.
    let kept = 0
    // The file offset of buffer[0].
    let offset = from
    let line = 0
    while (true) {
      if (kept === buffer.length) {
        // One line longer than the buffer: grow it.
        const grown = Buffer.allocUnsafe(buffer.length * 2)
        buffer.copy(grown, 0, 0, kept)
        buffer = grown
      }
      const { bytesRead } = await handle.read(buffer, kept, buffer.length - kept, offset + kept)
      const atEnd = bytesRead === 0
      const view = buffer.subarray(0, kept + bytesRead)
      const ready = beforeChunk?.(view.length)
      if (ready !== undefined) await ready
      const end = view.length
      let start = 0
      // The next \r, found once per chunk (most files have none), not once per line.
      let cr = view.indexOf(CR)
      // So is the next \n (a file of lines ended by lone \r would otherwise look for it from every line).
      let lf = view.indexOf(LF)
      while (start < end) {
        if (lineEnd !== undefined) {
          // A line the handler can end itself, at a \n within the chunk (view ends at `end`): no
          // search for it. A \r, or no line break yet, is left to the search below.
          const known = lineEnd(view, start, end)
          if (known !== -1 && view[known] === LF) {
            onLine(++line, view, start, known)
            start = known + 1
            continue
          }
        }
        if (lf !== -1 && lf < start) lf = view.indexOf(LF, start)
        if (cr !== -1 && (lf === -1 || cr < lf)) {
          // A \r ends the line, with the \n after it if there is one: undecided until the next chunk.
          if (cr + 1 === end && !atEnd) break
          onLine(++line, view, start, cr)
          start = cr + 1 < end && view[cr + 1] === LF ? cr + 2 : cr + 1
          cr = view.indexOf(CR, start)
          continue
        }
        if (lf === -1) break
        onLine(++line, view, start, lf)
        start = lf + 1
      }
      if (atEnd) {
        // What is left is a last line without an end.
        if (start < end) onLine(++line, view, start, end, offset + start)
        return offset + end
      }
      offset += start
      kept = end - start
      buffer.copy(buffer, 0, start, end)
    }
  } finally {
    await handle.close()
  }
}
