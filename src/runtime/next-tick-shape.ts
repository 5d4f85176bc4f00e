import { executionAsyncResource } from 'node:async_hooks'

let keptTickObject: object | undefined

/**
 * Keeps one of `process.nextTick`'s queue entries alive for the life of the process, so that the
 * hidden class (map) every later entry is built with is never collected.
 *
 * Why: Node 24 builds each entry as an object literal with three symbol keys. When a full
 * (mark-compact) collection runs while no entry is alive, V8 may drop the chain of maps those
 * literals share; every entry created afterwards is then built through the runtime's slow
 * property definition and a map migration (`perf`: `Runtime_DefineKeyedOwnPropertyInLiteral`,
 * `JSObject::MigrateToMap`), for the rest of the process. Every HTTP request queues several
 * entries: a bare Fastify server answering 400s served 51,000-59,000 requests/s after one full
 * collection against 63,000-74,000 without one, and 62,000-74,000 after one with an entry kept;
 * in the provider (whose memory store runs a full collection after loading) a rejected request
 * cost 17.0-17.8 µs of CPU before, 14.8 µs after (BENCHMARKS.md, "What profiling found"). A live
 * entry keeps its map reachable, and through the map's back pointers the whole chain.
 *
 * The entry is taken from inside a tick callback, where `executionAsyncResource()` is the entry
 * being run. Two side effects, both harmless here: that call makes Node route native callbacks
 * through its JavaScript trampoline should an async hook be enabled later (none is, in this
 * process), and the entry holds the AsyncLocalStorage context current when it was queued, so
 * call this outside any (the server calls it first thing). Resolves once kept; calling again is
 * a no-op. On a Node where the resource is not a queue entry, nothing is kept.
 */
export async function keepNextTickShape (): Promise<object | undefined> {
  if (keptTickObject !== undefined) return keptTickObject
  return new Promise((resolve) => {
    process.nextTick(() => {
      const resource = executionAsyncResource() as { callback?: unknown }
      if (keptTickObject === undefined && typeof resource.callback === 'function' && 'args' in resource) keptTickObject = resource
      resolve(keptTickObject)
    })
  })
}
