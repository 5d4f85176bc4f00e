import cluster, { type Worker } from 'node:cluster'
import pino from 'pino'
import { LOG_ID_VARIABLE, mqttPublisher } from '../plugins/live-events.js'
import type { Config } from './config.js'
import { ClusterHub } from './live/cluster-bus.js'
import { newLogId } from './live/live-bus.js'

/**
 * WORKERS > 1: this process only forks the workers that serve (they share the port through
 * node:cluster) and keeps them running. A worker that fails before it listens stops the whole
 * start-up (the data or configuration is bad, and every worker would fail the same way); one
 * that dies later is replaced. Once every first worker has listened, a replacement that stops
 * before it listens (killed, or its load failed) does not stop the workers that serve: another is
 * started after a pause, which doubles while replacements keep failing (1 s to 30 s); with no
 * worker left serving, the provider stops (exit 1). SIGTERM/SIGINT stop the workers gracefully (each is sent SIGTERM,
 * which it takes once however often it comes: src/server.ts), then this process, which exits 1
 * when a worker's shutdown failed;
 * SIGHUP is passed on to every worker that listens (each reloads its data files).
 *
 * It also holds the live bus (src/live/cluster-bus.ts): the order of accepted events, the
 * write lock, and the MQTT connection, one per provider instance.
 */
/** The pause before a replacement worker that failed to listen is replaced, doubling up to the last. */
const FIRST_REPLACEMENT_PAUSE_MS = 1000
const LAST_REPLACEMENT_PAUSE_MS = 30_000

export function runClusterPrimary (config: Config): void {
  // Workers read the configuration themselves; generated tokens must be the same in all.
  const env = {
    API_TOKENS: config.apiTokens.join(','),
    INGEST_TOKENS: config.ingestTokens.join(','),
    WORKERS: '1',
    [LOG_ID_VARIABLE]: newLogId()
  }
  const log = pino({ level: config.logLevel })
  const hub = new ClusterHub(config.mqtt === undefined ? undefined : mqttPublisher(config.mqtt, log))
  hub.listenToBroker((topic) => log.warn({ topic }, 'a message on the MQTT bus that is not an event; ignored'))
    .catch((error: unknown) => log.error({ err: error }, 'cannot subscribe to the MQTT bus'))
  let stopping = false
  let exitCode = 0
  const listening = new Set<Worker>()
  /** Every first worker has listened: the start-up is over. */
  let started = false
  let replacementPauseMs = FIRST_REPLACEMENT_PAUSE_MS

  const fork = () => {
    const worker = cluster.fork(env)
    hub.attach(worker)
    worker.on('listening', () => {
      listening.add(worker)
      if (listening.size >= config.workers) started = true
      replacementPauseMs = FIRST_REPLACEMENT_PAUSE_MS
    })
    worker.on('exit', (code, signal) => {
      const wasListening = listening.delete(worker)
      if (stopping) {
        // A worker that failed its own shutdown (its deadline, a crash) makes the whole one fail;
        // one stopped by the signal while it was still starting had nothing to shut down.
        if (code !== 0 && (wasListening || signal !== 'SIGTERM')) exitCode = 1
        if (Object.keys(cluster.workers ?? {}).length === 0) exitAfterHub()
        return
      }
      if (!wasListening && !started) {
        console.error(`A worker stopped during start-up (exit code ${code ?? signal}); stopping.`)
        stop(1)
        return
      }
      if (!wasListening && listening.size === 0) {
        // No worker serves, and the one meant to does not start: this process ends, so that
        // whatever runs the provider sees it (rather than a port that answers nothing).
        console.error(`A replacement worker stopped before it listened (exit code ${code ?? signal}) and no worker serves; stopping.`)
        stop(1)
        return
      }
      if (!wasListening) {
        // The provider serves on with the workers it has.
        console.error(`A replacement worker stopped before it listened (${code ?? signal}); starting another in ${replacementPauseMs / 1000} s.`)
        setTimeout(() => { if (!stopping) fork() }, replacementPauseMs)
        replacementPauseMs = Math.min(2 * replacementPauseMs, LAST_REPLACEMENT_PAUSE_MS)
        return
      }
      console.error(`Worker ${worker.process.pid} died (${code ?? signal}); starting another.`)
      fork()
    })
  }

  // The bus closes once every worker has stopped: the events they accepted while stopping still
  // reach the MQTT broker (its publisher flushes for up to 3 s) and the other workers' streams.
  const exitAfterHub = () => {
    hub.close().catch(() => {}).finally(() => process.exit(exitCode))
  }

  const stop = (code: number) => {
    exitCode = Math.max(exitCode, code)
    if (stopping) return
    stopping = true
    hub.stopping()
    const workers = Object.values(cluster.workers ?? {})
    if (workers.length === 0) exitAfterHub()
    for (const worker of workers) worker?.process.kill('SIGTERM')
    // Each worker ends itself within 10 s (close-with-grace); then the bus's flush.
    setTimeout(() => process.exit(1), 15_000).unref()
  }

  // To the workers that listen only: one still starting may not have its handler yet (Node's
  // default for a hang-up ends the process, which stopped a cluster's start-up); it takes a
  // change made since it read the files through its watch and poll (reloadable-file.ts).
  process.on('SIGHUP', () => {
    for (const worker of listening) worker.process.kill('SIGHUP')
  })
  // A second signal forces the end, as close-with-grace does in a single process (the workers
  // take only the first: src/server.ts).
  const onSignal = () => {
    if (!stopping) {
      stop(0)
      return
    }
    console.error('A second signal: stopping the workers at once.')
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
    process.exit(1)
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  for (let i = 0; i < config.workers; i++) fork()
}
