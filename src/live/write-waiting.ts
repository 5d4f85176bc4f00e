import type { Writable } from 'node:stream'

/**
 * Writes a frame of a replay or resume, then waits for a slow reader (its unsent data over half
 * the bound) instead of dropping it. It waits only for a drain Node has planned: one comes only
 * after a write that filled the socket's buffer (`writableNeedDrain`). With a bound under twice
 * that buffer's high-water mark, unsent data over half the bound but under the mark waited for a
 * drain that never came, until the connection closed (found by review): that much is written on.
 */
export async function writeWaiting (socket: Writable, frame: string, maxBufferBytes: number): Promise<void> {
  if (socket.destroyed) return
  socket.write(frame)
  if (socket.writableNeedDrain && socket.writableLength > maxBufferBytes / 2 && !socket.destroyed) await drainedOrGone(socket)
}

/**
 * Until the socket has drained or is gone. A client's reset ends the wait as its close does
 * ('close' follows the error, and ends the stream): waiting with events.once, the error rejected
 * the route's promise, logged as the provider's error for every client that left mid-resume.
 */
async function drainedOrGone (socket: Writable): Promise<void> {
  await new Promise<void>((resolve) => {
    const done = (): void => {
      socket.off('drain', done)
      socket.off('close', done)
      socket.off('error', done)
      resolve()
    }
    socket.on('drain', done)
    socket.on('close', done)
    socket.on('error', done)
  })
}
