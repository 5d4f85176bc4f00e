import { setFlagsFromString } from 'node:v8'

/**
 * Collects and compacts what a large load leaves behind, once, before the provider serves.
 * Loading a million events leaves hundreds of megabytes of parse-time garbage in the old
 * generation, and in steady state nothing triggers the full GC that would free it. Every
 * young-generation GC walks every old-generation page, so its pause grows with the pages the
 * heap holds, live or not: on a 1,000,000-event store, about 3 ms per pause, every 40 ms under
 * load. A plain full GC frees the garbage but keeps its pages; compacting returns them.
 * Needs `--expose-gc`, which `npm start` passes; without it this does nothing.
 */
export function collectLoadGarbage (): boolean {
  const gc = (globalThis as { gc?: () => void }).gc
  if (typeof gc !== 'function') return false
  setFlagsFromString('--compact-on-every-full-gc')
  try {
    gc()
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc')
  }
  return true
}
