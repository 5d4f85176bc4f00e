/**
 * Texts encoded one after the other into one buffer, each written straight into its place, with
 * their byte offsets: offsets[i] to offsets[i + 1] are text i's bytes (and its line break, with
 * `lineBreaks`).
 *
 * Why not `Buffer.from(a + b + …)`: the concatenation is a rope of thousands of pieces that V8
 * first copies into one flat string, then encodes; for an ingest's events that was about
 * 0.5 µs an event, twice per group (the file's bytes and the segment's), a sixth of an ingest's
 * time (BENCHMARKS.md, "What profiling found"). Events' texts are nearly always ASCII, so the
 * buffer is sized by their characters and each is written where it goes; a text with other
 * characters (more bytes than characters) sends the whole group the long way, sized exactly.
 * `reuse`: a buffer to write into when it is large enough (the bytes are then a view of it), so
 * that a caller writing group after group does not have the kernel fault in fresh pages for each.
 */
export function joinedUtf8 (texts: ReadonlyArray<string>, lineBreaks: boolean, reuse?: Buffer): { bytes: Buffer, offsets: Uint32Array } {
  const count = texts.length
  const extra = lineBreaks ? 1 : 0
  let characters = 0
  for (let i = 0; i < count; i++) characters += texts[i]!.length + extra
  // Room for one more character of up to 4 bytes: then a text that is not ASCII always writes
  // other than its length in bytes (all of it: more; cut short at the end: still more than its
  // characters), while without it a text cut short could write exactly its length ("éa" in 2).
  let bytes = reuse !== undefined && reuse.length >= characters + 4 ? reuse : Buffer.allocUnsafe(characters + 4)
  const offsets = new Uint32Array(count + 1)
  let at = 0
  let ascii = true
  for (let i = 0; i < count && ascii; i++) {
    const text = texts[i]!
    const written = bytes.write(text, at, Math.min(bytes.length, characters + 4) - at, 'utf8')
    if (written !== text.length) ascii = false
    at += written
    if (lineBreaks) bytes[at++] = 0x0a
    offsets[i + 1] = at
  }
  if (ascii) return { bytes: bytes.subarray(0, at), offsets }
  let total = 0
  for (let i = 0; i < count; i++) total += Buffer.byteLength(texts[i]!) + extra
  bytes = Buffer.allocUnsafe(total)
  at = 0
  for (let i = 0; i < count; i++) {
    at += bytes.write(texts[i]!, at, total - at, 'utf8')
    if (lineBreaks) bytes[at++] = 0x0a
    offsets[i + 1] = at
  }
  return { bytes, offsets }
}
