import t, { type Test } from 'tap'
import { EventEmitter } from 'node:events'
import type { Worker } from 'node:cluster'
import { ClusterHub } from '../../src/live/cluster-bus.js'

/**
 * A stand-in for a node:cluster worker as the primary's hub sees it (its messages and events),
 * named as such: the hub's protocol with workers that die at chosen moments, which real
 * processes cannot be made to do on cue. The real cluster is tested in cluster-live.test.ts.
 */
class FakeWorker extends EventEmitter {
  static #next = 1
  readonly id = FakeWorker.#next++
  readonly process = { pid: 1000 + this.id }
  readonly sent: Array<Record<string, unknown>> = []
  dead = false
  /** Dying: its channel is closing, though it still looks connected (as a real worker killed at the same moment as another). */
  dying = false
  send (message: Record<string, unknown>): boolean {
    // node:child_process emits a failed send as the worker's 'error' event, a tick later.
    if (this.dying) process.nextTick(() => this.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })))
    else this.sent.push(message)
    return !this.dying
  }

  isConnected (): boolean { return !this.dead }
  isDead (): boolean { return this.dead }
  /** What the worker sends the primary. */
  says (message: Record<string, unknown>): void { this.emit('message', message) }
  die (): void { this.dead = true; this.emit('exit', null, 'SIGKILL') }
  of (live: string): Array<Record<string, unknown>> { return this.sent.filter((message) => message.live === live) }
}

/** A hub in the primary, closed at the end of the test. */
function primaryHub (t: Test): ClusterHub {
  const hub = new ClusterHub(undefined)
  t.teardown(() => hub.close())
  return hub
}

function started (hub: ClusterHub): FakeWorker {
  const worker = new FakeWorker()
  hub.attach(worker as unknown as Worker)
  return worker
}

/** A worker started and listening. */
function serving (hub: ClusterHub): FakeWorker {
  const worker = started(hub)
  worker.emit('listening')
  return worker
}

t.test('a worker that served and died: every serving worker is told to take what it left, and is granted the lock with what to take until it says it took it', async (t) => {
  const hub = primaryHub(t)
  const [a, b, c] = [serving(hub), serving(hub), serving(hub)]
  t.same(a.of('take-unannounced'), [], 'nothing to take before a death')
  a.says({ live: 'lock', id: 1 })
  t.same(a.of('granted'), [{ live: 'granted', id: 1 }], 'a plain grant')
  a.says({ live: 'unlock', id: 1 })

  c.die()
  t.equal(a.of('take-unannounced').length, 1, 'a is told at the death')
  t.equal(b.of('take-unannounced').length, 1, 'b too')
  b.says({ live: 'lock', id: 1 })
  t.same(b.of('granted').at(-1), { live: 'granted', id: 1, takeUpTo: 1 }, 'the grant says what to take')
  // b's take failed: it unlocks without saying it took; its next grant asks again.
  b.says({ live: 'unlock', id: 1 })
  b.says({ live: 'lock', id: 2 })
  t.same(b.of('granted').at(-1), { live: 'granted', id: 2, takeUpTo: 1 }, 'asked again after a failed take')
  b.says({ live: 'taken', upTo: 1 })
  b.says({ live: 'unlock', id: 2 })
  b.says({ live: 'lock', id: 3 })
  t.same(b.of('granted').at(-1), { live: 'granted', id: 3 }, 'taken: a plain grant again')
  b.says({ live: 'unlock', id: 3 })
  a.says({ live: 'lock', id: 2 })
  t.same(a.of('granted').at(-1), { live: 'granted', id: 2, takeUpTo: 1 }, 'b taking for itself took nothing for a')
  a.says({ live: 'taken', upTo: 1 })
  a.says({ live: 'unlock', id: 2 })
})

t.test('a worker started before a death takes once it listens; one started after it has what the dead one wrote', async (t) => {
  const hub = primaryHub(t)
  const a = serving(hub)
  const loading = started(hub)
  a.die()
  t.same(loading.of('take-unannounced'), [], 'not told while it loads (it cannot take yet)')
  const replacement = started(hub)
  loading.emit('listening')
  t.equal(loading.of('take-unannounced').length, 1, 'told once it listens: it may have loaded before the dead one\'s last write')
  replacement.emit('listening')
  t.same(replacement.of('take-unannounced'), [], 'the replacement began loading after the death')
  replacement.says({ live: 'lock', id: 1 })
  t.same(replacement.of('granted').at(-1), { live: 'granted', id: 1 }, 'and is granted the lock plainly')
})

t.test('a worker that never listened never wrote: its death asks no one to take; a dead worker\'s late lock request is never granted', async (t) => {
  const hub = primaryHub(t)
  const a = serving(hub)
  const failing = started(hub)
  failing.die()
  t.same(a.of('take-unannounced'), [], 'nothing to take')
  const b = serving(hub)
  a.says({ live: 'lock', id: 1 })
  b.die()
  b.says({ live: 'lock', id: 9 })
  a.says({ live: 'unlock', id: 1 })
  t.same(b.of('granted'), [], 'the dead worker\'s request, read after its exit, is not granted')
  a.says({ live: 'lock', id: 2 })
  t.equal(a.of('granted').length, 2, 'the lock is free for the living')
})

t.test('two workers dying at once: a message to the one whose channel is closing fails, and the primary goes on', async (t) => {
  const hub = primaryHub(t)
  const [a, b, c] = [serving(hub), serving(hub), serving(hub)]
  b.dying = true
  a.die()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(c.of('take-unannounced').length, 1, 'the other worker is still told')
  b.die()
  await new Promise((resolve) => setImmediate(resolve))
  c.says({ live: 'lock', id: 1 })
  t.same(c.of('granted').at(-1), { live: 'granted', id: 1, takeUpTo: 2 }, 'and granted the lock with both deaths to take')
})
