import { hash } from 'node:crypto'
import type { StreamFilter } from './stream-subscribers.js'
import { WeakInterned } from './weak-interned.js'

/**
 * One object per distinct filter of the open streams, and a short key for it: streams that ask
 * for the same events share the filter's sets and the frames built for it (StreamSubscribers).
 *
 * A filter can be large: fifteen tags resolve to some 5,500 entities, and a URL holds some 2,200
 * codes. Each stream kept sets of its own and a key of 115–230 KB (the filter's sorted IDs as
 * JSON): 9,000–9,400 such streams, within STREAM_MAX_CLIENTS, ran the process out of heap
 * (about 450 KB a stream), and each delivery compared those keys stream by stream, 232–495 ms
 * for a one-event ingest (a black-box attacker's session, 2026-11-28). The key is now the
 * SHA-256 of that JSON, and a filter is kept while a stream holds it (WeakRef): the sets built
 * for an opening stream whose filter is already held are let go.
 */
export class SharedStreamFilters {
  readonly #held = new WeakInterned<StreamFilter>()

  /** The filter streams asking for these events share (this one, when no stream holds it), and its key. */
  shared (filter: StreamFilter): { filter: StreamFilter, key: string } {
    const key = streamFilterKey(filter)
    if (key === '') return { filter, key }
    return { filter: this.#held.intern(key, filter), key }
  }

  /** Distinct filters held (for tests). */
  get size (): number {
    return this.#held.size
  }
}

/** The same for filters that select the same events: '' for every event. */
export function streamFilterKey ({ entities, scope, category, messageCodes }: StreamFilter): string {
  if (entities === undefined && scope === undefined && category === undefined && messageCodes === undefined) return ''
  return hash('sha256', JSON.stringify([
    entities === undefined ? null : [[...entities.deviceIds].sort(), [...entities.spaceIds].sort()],
    scope === undefined ? null : [[...scope.deviceIds].sort(), [...scope.spaceIds].sort()],
    category ?? null,
    messageCodes === undefined ? null : [...messageCodes].sort()
  ]), 'base64')
}
