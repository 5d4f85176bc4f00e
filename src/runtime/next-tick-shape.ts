import { executionAsyncResource } from 'node:async_hooks'

let keptTickObject: object | undefined

/**
 * Keeps one of `process.nextTick`'s queue entries alive for the life of the process, so that the
 * hidden class (map) every later entry is built with is never collected.
 *
 * Why: Node 24 builds each entry as an object literal with three symbol keys. When a full
 * (mark-compact) collection runs while no entry is alive, V8 drops the chain of maps those
 * literals share; every entry created afterwards is then built through the runtime's slow
 * property definition and a map migration (`perf`: `Runtime_DefineKeyedOwnPropertyInLiteral`,
 * `JSObject::MigrateToMap`), for the rest of the process. Every HTTP request queues several
 * entries, so after the memory store's post-load collection (or any later full collection) a
 * small answer cost about 2.5 µs more CPU: a bare Fastify server that ran one full collection
 * served 51,000-59,000 requests/s against 67,000-74,000 without one, and 71,000-74,000 with one
 * entry kept (BENCHMARKS.md, "What profiling found"). A live entry keeps its map, and through
 * the map's back pointers the whole chain, reachable.
 *
 * The entry is taken from inside a tick callback, where `executionAsyncResource()` is the entry
 * being run (no async hook is installed). Resolves once it is kept; calling again is a no-op.
 */
export async function keepNextTickShape (): Promise<object> {
  if (keptTickObject !== undefined) return keptTickObject
  return new Promise((resolve) => {
    process.nextTick(() => {
      keptTickObject ??= executionAsyncResource()
      resolve(keptTickObject)
    })
  })
}
