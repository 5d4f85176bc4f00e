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

/**
 * Calls onLine for the file's whole lines from its last back towards its first, while onLine
 * returns true: each line's text (UTF-8), without its line break (`\n`, `\r\n` or a lone `\r`).
 * A last line without a line break is not one of them (it may be an append under way, or cut
 * short). Reads `chunkBytes` at a time from the end, so a caller that stops after a few lines
 * reads only the file's end. Resolves with how many bytes of lines it went back over.
 */
export async function forEachLineBackward (file: string, onLine: (text: string) => boolean, chunkBytes = CHUNK_BYTES): Promise<number> {
  const handle = await open(file, 'r')
  try {
    const size = (await handle.stat()).size
    // The bytes not yet handed out, read so far: a line is handed out once its start is read.
    let pending = Buffer.alloc(0)
    let at = size
    let skippedUnended = false
    while (true) {
      const from = Math.max(0, at - chunkBytes)
      const chunk = Buffer.alloc(at - from)
      let read = 0
      while (read < chunk.length) {
        const { bytesRead } = await handle.read(chunk, read, chunk.length - read, from + read)
        if (bytesRead === 0) break
        read += bytesRead
      }
      at = from
      let bytes = pending.length === 0 ? chunk : Buffer.concat([chunk, pending])
      if (!skippedUnended) {
        // The bytes after the last line break are no whole line.
        const lastBreak = Math.max(bytes.lastIndexOf(LF), bytes.lastIndexOf(CR))
        if (lastBreak === -1 && at > 0) {
          pending = bytes
          continue
        }
        bytes = bytes.subarray(0, lastBreak + 1)
        skippedUnended = true
      }
      // Lines whose start is read: each after a line break in `bytes`, or at the file's start.
      let end = bytes.length
      while (end > 0) {
        let lineEnd = end
        if (bytes[lineEnd - 1] === LF) lineEnd--
        if (lineEnd > 0 && bytes[lineEnd - 1] === CR) lineEnd--
        if (lineEnd === end) break
        // (lastIndexOf from a negative offset would count from the end.)
        const start = lineEnd === 0 ? 0 : Math.max(bytes.lastIndexOf(LF, lineEnd - 1), bytes.lastIndexOf(CR, lineEnd - 1)) + 1
        if (start === 0 && at > 0) break
        if (!onLine(bytes.toString('utf8', start, lineEnd))) return size - (at + start)
        end = start
      }
      if (at === 0) return size
      pending = Buffer.from(bytes.subarray(0, end))
    }
  } finally {
    await handle.close()
  }
}
