import { closeSync, constants as fsConstants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs'
import { constants, open } from 'node:fs/promises'

/**
 * The text or bytes of a regular file (or of one behind links). Anything else is refused: reading
 * a named pipe waits for a writer, for good (a reload of its file, and every later one queued
 * behind it, waited with one of libuv's four threads; a synchronous read held the whole process),
 * and a device may never end. Opened without blocking, so that opening a pipe returns at once to
 * be refused.
 */
export async function readRegularFile (file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    refuseIrregular(await handle.stat())
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}

/** readRegularFile's bytes, read synchronously (the TLS certificate files). */
export function readRegularFileSync (file: string): Buffer {
  const fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK)
  try {
    refuseIrregular(fstatSync(fd))
    return readFileSync(fd)
  } finally {
    closeSync(fd)
  }
}

function refuseIrregular (stats: Stats): void {
  const reason = irregularFileReason(stats)
  if (reason !== undefined) throw new Error(reason)
}

/** Why a file of these stats is not read (undefined for a regular file). */
export function irregularFileReason (stats: Stats): string | undefined {
  return stats.isFile() ? undefined : `not a regular file (${stats.isDirectory() ? 'a directory' : stats.isFIFO() ? 'a named pipe' : 'a device or socket'})`
}
