import cluster, { type Worker } from 'node:cluster'
import type { Config } from './config.js'

/**
 * WORKERS > 1: this process only forks the workers that serve (they share the port through
 * node:cluster) and keeps them running. A worker that fails before it listens stops the whole
 * start-up (the data or configuration is bad, and every worker would fail the same way); one
 * that dies later is replaced. SIGTERM/SIGINT stop the workers gracefully, then this process.
 */
export function runClusterPrimary (config: Config): void {
  // Workers read the configuration themselves; a generated token must be the same in all.
  const env = { API_TOKENS: config.apiTokens.join(','), WORKERS: '1' }
  let stopping = false
  let exitCode = 0
  const listening = new Set<Worker>()

  const fork = () => {
    const worker = cluster.fork(env)
    worker.on('listening', () => listening.add(worker))
    worker.on('exit', (code, signal) => {
      const wasListening = listening.delete(worker)
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode)
        return
      }
      if (!wasListening) {
        console.error(`A worker stopped during start-up (exit code ${code ?? signal}); stopping.`)
        stop(1)
        return
      }
      console.error(`Worker ${worker.process.pid} died (${code ?? signal}); starting another.`)
      fork()
    })
  }

  const stop = (code: number) => {
    stopping = true
    exitCode = Math.max(exitCode, code)
    const workers = Object.values(cluster.workers ?? {})
    if (workers.length === 0) process.exit(exitCode)
    for (const worker of workers) worker?.process.kill('SIGTERM')
    setTimeout(() => process.exit(exitCode), 15_000).unref()
  }

  process.on('SIGTERM', () => stop(0))
  process.on('SIGINT', () => stop(0))
  for (let i = 0; i < config.workers; i++) fork()
}
