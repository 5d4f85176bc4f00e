import { open, type FileHandle } from 'node:fs/promises'

/**
 * Appends lines to EVENTS_FILE, the memory store's durable form: each append is one write of
 * whole lines, flushed to the disk (fdatasync) before it resolves, so an event acknowledged is
 * an event that survives a crash. A file that ends without a line break (written by hand, or by
 * another tool) gets one before the first append.
 */
export class EventsFileAppender {
  readonly #file: string
  #handle: FileHandle | undefined
  #endsMidLine = false

  constructor (file: string) {
    this.#file = file
  }

  /** Appends the text (whole lines, each ending in a line break) and waits until it is on disk. */
  async append (text: string): Promise<void> {
    if (text === '') return
    const handle = this.#handle ?? await this.#open()
    const { bytesWritten } = await handle.write(this.#endsMidLine ? '\n' + text : text)
    if (bytesWritten < Buffer.byteLength(text)) throw new Error(`${this.#file}: a short write (${bytesWritten} bytes)`)
    this.#endsMidLine = false
    await handle.datasync()
  }

  async close (): Promise<void> {
    await this.#handle?.close()
    this.#handle = undefined
  }

  async #open (): Promise<FileHandle> {
    // 'a': every write goes to the end of the file, whoever else appends to it (cluster workers).
    const handle = await open(this.#file, 'a+')
    const { size } = await handle.stat()
    if (size > 0) {
      const last = Buffer.alloc(1)
      await handle.read(last, 0, 1, size - 1)
      this.#endsMidLine = last[0] !== 0x0a
    }
    this.#handle = handle
    return handle
  }
}
