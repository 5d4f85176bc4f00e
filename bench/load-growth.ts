import { createReadStream, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { projectRoot } from '../src/project-root.js'
import type { Dataset } from './dataset.js'
import { log } from './log.js'
import { startChild, waitForExit } from './processes.js'
import { startProvider } from './provider.js'
import { RssSampler, treeRssBytes } from './rss.js'

/** Parts of the data set loaded, to see how loading grows with its size. */
const FRACTIONS = [0.25, 0.5, 1]
const MB = 1024 * 1024

export interface LoadGrowthPoint {
  events: number
  /** The provider's own figure: from opening EVENTS_FILE to the store ready (the log line). */
  loadSeconds: number
  /** A bare script reading the same file and JSON.parse-ing every line. */
  parseSeconds: number
  /** loadSeconds / parseSeconds. */
  ratio: number
  peakRssMB: number
  /** RSS once loaded and settled. */
  rssMB: number
  /** RSS per event once loaded, in bytes. */
  bytesPerEvent: number
}

async function firstLines (source: string, count: number, target: string): Promise<void> {
  const out = createWriteStream(target)
  let written = 0
  for await (const line of createInterface({ input: createReadStream(source, { encoding: 'utf8' }), crlfDelay: Infinity })) {
    if (written === count) break
    if (!out.write(line + '\n')) await once(out, 'drain')
    written++
  }
  out.end()
  await once(out, 'finish')
}

async function parseSeconds (file: string): Promise<number> {
  const child = startChild(process.execPath, ['--import', 'tsx', join(projectRoot, 'bench', 'parse-lines.ts'), file], { cwd: projectRoot })
  let stdout = ''
  child.process.stdout!.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  const code = await waitForExit(child)
  if (code !== 0) throw new Error(`parse-lines failed (${code}): ${child.output()}`)
  return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { seconds: number }).seconds
}

/** Loads 25%, 50% and all of the data set into memory-store providers, one at a time. */
export async function measureLoadGrowth (dataset: Dataset, token: string, scratch: string): Promise<LoadGrowthPoint[]> {
  const points: LoadGrowthPoint[] = []
  for (const fraction of FRACTIONS) {
    const events = Math.round(dataset.events * fraction)
    const file = fraction === 1 ? dataset.eventsFile : join(scratch, `events-${events}.ndjson`)
    if (fraction !== 1) await firstLines(dataset.eventsFile, events, file)
    const parse = await parseSeconds(file)
    let sampler: RssSampler | undefined
    const provider = await startProvider({
      name: `memory, ${events} events`,
      dataset,
      token,
      store: 'memory',
      eventsFile: file,
      logLevel: 'info',
      onSpawn: (pid) => { sampler = new RssSampler(pid, 50) }
    })
    try {
      const reading = await sampler!.stop()
      const loaded = provider.child.output().split('\n').map((line) => { try { return JSON.parse(line) as { msg?: string, seconds?: number } } catch { return undefined } })
        .find((line) => line?.msg === 'events loaded into the memory store')
      if (loaded?.seconds === undefined) throw new Error(`the provider did not log its load time: ${provider.child.output().slice(-500)}`)
      const rss = treeRssBytes(provider.pid)
      points.push({
        events,
        loadSeconds: loaded.seconds,
        parseSeconds: parse,
        ratio: loaded.seconds / parse,
        peakRssMB: reading.peakBytes / MB,
        rssMB: rss / MB,
        bytesPerEvent: rss / events
      })
      log(`load: ${events} events in ${loaded.seconds.toFixed(1)} s (JSON.parse alone ${parse.toFixed(1)} s), peak RSS ${(reading.peakBytes / MB).toFixed(0)} MB`)
    } finally {
      await provider.stop()
    }
  }
  return points
}
