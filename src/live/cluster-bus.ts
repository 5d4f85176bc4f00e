import cluster, { type Worker } from 'node:cluster'
import type { Message } from '../../schemas/message.js'
import type { LiveEvent, LiveSource } from './live-event.js'
import type { AcceptedEvent, BrokerStatus, LiveBus, LiveListener } from './live-bus.js'
import type { MqttPublisher } from './mqtt-publisher.js'
import { SequenceHub } from './sequence-hub.js'

/** Messages between a cluster's workers and its primary, all tagged `live`. */
type ToPrimary =
  | { live: 'publish', jsons: string[] }
  | { live: 'lock', id: number }
  | { live: 'unlock', id: number }
  /** Under the lock: this worker took what the deaths up to `upTo` left (ClusterWorkerBus.onProcessDied). */
  | { live: 'taken', upTo: number }
  | { live: 'settled' }

type ToWorker =
  | { live: 'events', first: number, jsons: string[], origin: number | null }
  /** `takeUpTo`: workers died since this one last took what they left (ClusterWorkerBus.onProcessDied). */
  | { live: 'granted', id: number, takeUpTo?: number }
  /** A worker died: take what it may have left unannounced, with the lock (even with nothing to write). */
  | { live: 'take-unannounced' }
  | { live: 'broker', status: BrokerStatus | undefined }
  | { live: 'all-settled' }

function isLive (message: unknown): message is { live: string } {
  return typeof message === 'object' && message !== null && typeof (message as { live?: unknown }).live === 'string'
}

/**
 * The primary's side: one SequenceHub for the whole cluster. Each worker's accepted events come
 * here, get their seqs, go to MQTT and back to every worker; a write lock makes the workers
 * write to the store one at a time, and since the primary sends a writer's events to every
 * worker before it grants the lock to the next, the next writer's store already has them when
 * it checks its message_ids.
 */
export class ClusterHub {
  readonly #hub: SequenceHub
  readonly #waiting: Array<{ worker: Worker, id: number }> = []
  #holder: { worker: Worker, id: number } | undefined
  #brokerStatus: BrokerStatus | undefined
  /** The provider is stopping (every worker is): a worker's streams wait for the others' events. */
  #stopping = false
  /** Stopping workers whose ingests under way are done and whose events the hub has handed out. */
  readonly #settled = new Set<Worker>()
  /**
   * Deaths of workers that had listened, counted: each may have appended events and died
   * before announcing them (between its write and its publish, lock held). Every worker takes
   * what they left (the events at the store's end it does not have) and announces those, once
   * for each death after it began loading the store: when it is granted the lock, and at the
   * death (or once it listens) without waiting for a write. Each takes for itself: a worker that
   * loaded the store after the events were written has them, one that loaded it before does not.
   */
  #deaths = 0
  /** Per worker: the deaths whose events it has (it began loading after them, or took them). */
  readonly #takenUpTo = new Map<Worker, number>()
  /** Workers that have listened: they serve, and can take. */
  readonly #listening = new Set<Worker>()

  constructor (mqtt: MqttPublisher | undefined) {
    this.#hub = new SequenceHub((first, events, origin) => {
      const message: ToWorker = { live: 'events', first, jsons: events.map(({ json }) => json), origin: origin === 'another-provider' ? null : Number(origin.process) }
      for (const worker of Object.values(cluster.workers ?? {})) {
        if (worker?.isConnected() === true) worker.send(message)
      }
    }, mqtt)
    this.#brokerStatus = this.#hub.brokerStatus()
    if (mqtt !== undefined) {
      // Workers learn the broker's status for their readiness probe and metrics.
      setInterval(() => {
        const status = this.#hub.brokerStatus()
        if (JSON.stringify(status) === JSON.stringify(this.#brokerStatus)) return
        this.#brokerStatus = status
        this.#toAll({ live: 'broker', status })
      }, 500).unref()
    }
  }

  async listenToBroker (onBadPayload: (topic: string) => void): Promise<void> {
    await this.#hub.listenToBroker(onBadPayload)
  }

  /** Hooks a new worker up; call for every fork. */
  attach (worker: Worker): void {
    // A message sent to a worker that is dying fails (EPIPE) as an 'error' event of the worker,
    // which would end this process if nothing heard it; the worker's exit follows, and is handled.
    worker.on('error', () => {})
    // It loads the store from now on: after every death so far.
    this.#takenUpTo.set(worker, this.#deaths)
    // Once it listens: sent at once, it came before the worker's bus could hear it (and was lost).
    worker.once('listening', () => {
      this.#listening.add(worker)
      if (!worker.isConnected()) return
      worker.send({ live: 'broker', status: this.#hub.brokerStatus() } satisfies ToWorker)
      // A worker died while this one loaded: it may have loaded the store before that one's last write.
      if (this.#takenUpTo.get(worker)! < this.#deaths) worker.send({ live: 'take-unannounced' } satisfies ToWorker)
    })
    worker.on('message', (message: unknown) => {
      if (!isLive(message)) return
      const request = message as ToPrimary
      if (request.live === 'publish') {
        this.#hub.accepted(request.jsons.map((json) => ({ message: JSON.parse(json) as Message, json })), String(worker.id))
      } else if (request.live === 'lock') {
        // A dead worker's message read after its exit: never granted.
        if (worker.isDead()) return
        this.#waiting.push({ worker, id: request.id })
        this.#grantNext()
      } else if (request.live === 'taken') {
        this.#takenUpTo.set(worker, Math.max(this.#takenUpTo.get(worker) ?? 0, request.upTo))
      } else if (request.live === 'unlock') {
        if (this.#holder?.worker === worker && this.#holder.id === request.id) this.#holder = undefined
        this.#grantNext()
      } else if (request.live === 'settled') {
        // A worker stopping alone (not the provider) waits for no one.
        if (!this.#stopping) worker.send({ live: 'all-settled' } satisfies ToWorker)
        else {
          this.#settled.add(worker)
          this.#answerSettled()
        }
      }
    })
    worker.on('exit', () => {
      const listened = this.#listening.delete(worker)
      this.#takenUpTo.delete(worker)
      if (this.#holder?.worker === worker) this.#holder = undefined
      for (let i = this.#waiting.length - 1; i >= 0; i--) if (this.#waiting[i]!.worker === worker) this.#waiting.splice(i, 1)
      // (One that never listened never wrote: the lock is asked for only once a worker serves.)
      if (listened && !this.#stopping) {
        this.#deaths++
        for (const other of this.#listening) if (other.isConnected()) other.send({ live: 'take-unannounced' } satisfies ToWorker)
      }
      this.#grantNext()
      this.#settled.delete(worker)
      this.#answerSettled()
    })
  }

  /**
   * The provider stops: from now on each worker that says its ingests are done hears back once
   * all of them have said so (or have exited). Their events were sent to every worker before:
   * each worker has them before that word.
   */
  stopping (): void {
    this.#stopping = true
  }

  #answerSettled (): void {
    if (!this.#stopping || this.#settled.size === 0) return
    const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker?.isConnected() === true)
    if (!workers.every((worker) => this.#settled.has(worker!))) return
    for (const worker of this.#settled) if (worker.isConnected()) worker.send({ live: 'all-settled' } satisfies ToWorker)
    this.#settled.clear()
  }

  async close (): Promise<void> {
    await this.#hub.close()
  }

  #grantNext (): void {
    while (this.#holder === undefined && this.#waiting.length > 0) {
      const next = this.#waiting.shift()!
      if (!next.worker.isConnected()) continue
      this.#holder = next
      const takeUpTo = this.#takenUpTo.get(next.worker)! < this.#deaths ? this.#deaths : undefined
      next.worker.send({ live: 'granted', id: next.id, ...(takeUpTo === undefined ? {} : { takeUpTo }) } satisfies ToWorker)
    }
  }

  #toAll (message: ToWorker): void {
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker?.isConnected() === true) worker.send(message)
    }
  }
}

/** A worker's side: the bus is in the primary, reached over the cluster's IPC channel. */
export class ClusterWorkerBus implements LiveBus {
  readonly logId: string
  readonly #listeners: LiveListener[] = []
  readonly #grants = new Map<number, (takeUpTo: number | undefined) => void>()
  #onProcessDied: (() => Promise<void>) | undefined
  readonly #onMessage: (message: unknown) => void
  #nextLockId = 1
  #brokerStatus: BrokerStatus | undefined
  #onAllSettled: (() => void) | undefined

  constructor (logId: string) {
    this.logId = logId
    const self = cluster.worker!.id
    this.#onMessage = (message: unknown) => {
      if (!isLive(message)) return
      const event = message as ToWorker
      if (event.live === 'events') {
        const live: LiveEvent[] = event.jsons.map((json, i) => ({ seq: event.first + i, message: JSON.parse(json) as Message, json }))
        const source: LiveSource = event.origin === null ? 'another-provider' : event.origin === self ? 'this-process' : 'this-provider'
        for (const listener of this.#listeners) listener(live, source)
      } else if (event.live === 'granted') {
        this.#grants.get(event.id)?.(event.takeUpTo)
        this.#grants.delete(event.id)
      } else if (event.live === 'take-unannounced') {
        // Nothing to write: the grant says what to take, and the take runs before this write.
        // (A take that fails is logged by its taker, and tried again at the next grant.)
        this.exclusive(async () => {}).catch(() => {})
      } else if (event.live === 'broker') {
        this.#brokerStatus = event.status
      } else if (event.live === 'all-settled') {
        this.#onAllSettled?.()
      }
    }
    process.on('message', this.#onMessage)
  }

  publish (events: readonly AcceptedEvent[]): void {
    this.#send({ live: 'publish', jsons: events.map(({ json }) => json) })
  }

  listen (listener: LiveListener): void {
    this.#listeners.push(listener)
  }

  async exclusive<T> (write: () => Promise<T>): Promise<T> {
    const id = this.#nextLockId++
    const takeUpTo = await new Promise<number | undefined>((resolve) => {
      this.#grants.set(id, resolve)
      this.#send({ live: 'lock', id })
    })
    try {
      // Should the take fail, so does the write (judged without those events, it could store an
      // ID twice), and the next grant asks again.
      if (takeUpTo !== undefined && this.#onProcessDied !== undefined) {
        await this.#onProcessDied()
        this.#send({ live: 'taken', upTo: takeUpTo })
      }
      return await write()
    } finally {
      this.#send({ live: 'unlock', id })
    }
  }

  onProcessDied (take: () => Promise<void>): void {
    this.#onProcessDied = take
  }

  brokerStatus (): BrokerStatus | undefined {
    return this.#brokerStatus
  }

  async settled (timeoutMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, timeoutMs))
      this.#onAllSettled = () => {
        clearTimeout(timer)
        resolve()
      }
      this.#send({ live: 'settled' })
    })
    this.#onAllSettled = undefined
  }

  async close (): Promise<void> {
    process.off('message', this.#onMessage)
  }

  #send (message: ToPrimary): void {
    process.send?.(message)
  }
}
