/**
 * A route's hooks of one phase with `hook` run last: an onRoute hook's way of adding its own
 * (Fastify takes one function or an array there).
 */
export function withHookLast<T> (hooks: T | T[] | undefined, hook: T): T[] {
  if (hooks === undefined) return [hook]
  return Array.isArray(hooks) ? [...hooks, hook] : [hooks, hook]
}
