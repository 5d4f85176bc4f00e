import { readFileSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { processTree } from './processes.js'

/** VmRSS of one process from /proc/<pid>/status, in bytes (0 once it is gone). */
export function rssBytes (pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

/**
 * CPU time (user + system) a process and all its descendants have used, in seconds, from
 * /proc/<pid>/stat (in USER_HZ ticks, 100 a second on Linux).
 */
export function treeCpuSeconds (pid: number): number {
  return processTree(pid).reduce((sum, id) => {
    try {
      // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return sum + (Number(fields[11]) + Number(fields[12])) / 100
    } catch {
      return sum
    }
  }, 0)
}

/** The resident memory of a process and all its descendants (a cluster's primary and workers). */
export function treeRssBytes (pid: number): number {
  return processTree(pid).reduce((sum, id) => sum + rssBytes(id), 0)
}

export interface RssReading {
  startBytes: number
  peakBytes: number
  lastBytes: number
  samples: number
}

/**
 * The sampling loop runs in a worker thread, so a busy load generator on the main thread does not
 * stretch its interval. It is plain JavaScript (evaluated, not loaded through tsx): it walks
 * /proc/<pid>/task/<tid>/children and sums VmRSS over the tree.
 */
const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads')
const { readFileSync, readdirSync } = require('node:fs')
const read = (path) => { try { return readFileSync(path, 'utf8') } catch { return '' } }
const tree = (pid) => {
  const found = [pid]
  let tasks = []
  try { tasks = readdirSync('/proc/' + pid + '/task') } catch {}
  for (const task of tasks) {
    for (const id of read('/proc/' + pid + '/task/' + task + '/children').split(' ')) {
      if (id.trim() !== '') found.push(...tree(Number(id)))
    }
  }
  return found
}
const rss = () => tree(workerData.pid).reduce((sum, id) => {
  const match = /^VmRSS:\\s+(\\d+)\\s+kB$/m.exec(read('/proc/' + id + '/status'))
  return sum + (match === null ? 0 : Number(match[1]) * 1024)
}, 0)
let start = rss()
let peak = start
let last = start
let samples = 1
const timer = setInterval(() => {
  last = rss()
  samples++
  if (last > peak) peak = last
}, workerData.intervalMs)
parentPort.on('message', (command) => {
  if (command === 'reset') {
    start = rss()
    peak = start
    last = start
    samples = 1
  }
  if (command === 'stop') clearInterval(timer)
  parentPort.postMessage({ startBytes: start, peakBytes: peak, lastBytes: last, samples })
  if (command === 'stop') parentPort.close()
})
`

/** Samples a process tree's RSS every intervalMs; reset() starts a new period, read() ends it. */
export class RssSampler {
  readonly #worker: Worker

  constructor (pid: number, intervalMs: number) {
    this.#worker = new Worker(SAMPLER, { eval: true, workerData: { pid, intervalMs } })
    this.#worker.unref()
  }

  async #ask (command: 'reset' | 'read' | 'stop'): Promise<RssReading> {
    const worker = this.#worker
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => {
        worker.off('message', onMessage)
        reject(error)
      }
      const onMessage = (reading: RssReading) => {
        worker.off('error', onError)
        resolve(reading)
      }
      worker.once('message', onMessage)
      worker.once('error', onError)
      worker.postMessage(command)
    })
  }

  /** Starts a new period: the start is sampled now, the peak forgotten. */
  async reset (): Promise<RssReading> {
    return this.#ask('reset')
  }

  async read (): Promise<RssReading> {
    return this.#ask('read')
  }

  async stop (): Promise<RssReading> {
    const reading = await this.#ask('stop')
    await this.#worker.terminate()
    return reading
  }
}
