import { setFlagsFromString } from 'node:v8'

/** The flag, set only on a V8 that has it (V8 13, Node 24; an older V8 prints that it does not know it). */
export const EXTERNAL_MEMORY_FLAG = '--external-memory-accounted-in-global-limit'

/**
 * Makes V8 count memory outside the JavaScript heap (the buffers answers are written into)
 * toward the heap's own limit. Without it, Node 24's V8 starts a full collection of the whole heap
 * for every few tens of megabytes of such buffers; with a million events' objects in the heap
 * each takes 50–70 ms of marking, and under medium answers one started every ~130 ms: a 234 kB
 * answer took 0.78 ms of CPU instead of 0.11 ms, and large answers fell to a third of their
 * rate (BENCHMARKS.md, "What profiling found"). Set here, at run time, rather than on the
 * command line: on a Node whose V8 does not know the flag (Node 20) the provider still starts.
 * Returns whether it was set.
 */
export function countExternalMemoryInHeapLimit (v8Version = process.versions.v8, setFlags = setFlagsFromString): boolean {
  if (Number(v8Version.split('.')[0]) < 13) return false
  setFlags(EXTERNAL_MEMORY_FLAG)
  return true
}
