import { randomBytes, randomInt } from 'node:crypto'
import { DataFileError } from '../data/data-file-error.js'
import { LiveEventSource, buildLiveWorld } from '../demo/live-events.js'
import { loadSimulationInputs } from '../demo/live-inputs.js'
import { runPoster, type PosterStats } from '../demo/live-poster.js'
import { Random } from '../demo/random.js'
import { OptionError, USAGE, parseSimulateOptions, type SimulateCommand } from './simulate-options.js'

/**
 * `npm run simulate -- --url URL --token TOKEN [--rate R] …`: see USAGE. Posts live events until
 * SIGINT or SIGTERM (a second one quits at once). Exit codes: 0 stopped, 1 the provider refused
 * the token or the requests, 2 bad options or files.
 */

/** A non-TTY (docker logs, a file) gets a status line this often instead of one rewritten in place. */
const LOG_STATUS_EVERY_MS = 10_000
/** The rate shown is over about this much of the recent past. */
const RATE_WINDOW_MS = 10_000

/** Milliseconds since the epoch that never go back, whatever happens to the system clock. */
const now = () => performance.timeOrigin + performance.now()

async function main (): Promise<number> {
  let command: SimulateCommand
  try {
    command = parseSimulateOptions(process.argv.slice(2), process.env)
  } catch (error) {
    if (!(error instanceof OptionError)) throw error
    console.error(`simulate: ${error.message}\n\n${USAGE}`)
    return 2
  }
  if (command.help) {
    console.log(USAGE)
    return 0
  }
  const { options } = command

  let inputs
  try {
    inputs = await loadSimulationInputs(options.entitiesFile, options.specificationsFile)
  } catch (error) {
    if (!(error instanceof DataFileError)) throw error
    console.error(`simulate: ${error.message}`)
    return 2
  }
  const seed = options.seed ?? randomInt(2 ** 31)
  const startMs = now()
  // One prefix per run, and a random part for two runs started in the same millisecond.
  const idPrefix = `sim-${Math.floor(startMs).toString(36)}-${randomBytes(2).toString('hex')}`
  const world = buildLiveWorld(inputs.entities, inputs.catalog, Random.stream(seed, 'types'))
  let source: LiveEventSource
  try {
    source = new LiveEventSource(world, Random.stream(seed, 'live'), { rate: options.rate, startMs, idPrefix })
  } catch (error) {
    console.error(`simulate: ${(error as Error).message} (${options.entitiesFile}, ${options.specificationsFile ?? 'the demo codes'})`)
    return 2
  }

  const devices = inputs.entities.devices.length
  const spaces = inputs.entities.spaces.length
  console.log(`simulate: about ${options.rate} events/s to POST ${options.endpoint.href} from ${devices} devices and ${spaces} spaces, ` +
    `${inputs.catalog.specifications.length} message codes; message IDs ${idPrefix}-1, -2, …; seed ${seed}`)
  console.log(`simulate: the stories run ${formatSpeedup(source.speedup)} faster than real time; Ctrl-C stops`)
  if (world.guessedDevices > 0) console.log(`simulate: ${world.guessedDevices} devices have no demo type tag or ID prefix; each was given a type at random`)

  const status = new StatusLine(process.stdout.isTTY === true)
  const controller = new AbortController()
  let signals = 0
  const stop = (signal: NodeJS.Signals) => {
    if (++signals > 1) process.exit(130)
    status.notice(`simulate: ${signal}: stopping (again to quit at once)`)
    controller.abort()
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  const timer = status.tty ? undefined : setInterval(() => status.log(), LOG_STATUS_EVERY_MS)

  const result = await runPoster({
    endpoint: options.endpoint,
    token: options.token,
    source,
    signal: controller.signal,
    now,
    onAttempt: (stats) => status.update(stats),
    onNotice: (text) => status.notice(`simulate: ${text}`)
  })
  clearInterval(timer)
  process.off('SIGINT', stop)
  process.off('SIGTERM', stop)
  status.update(result.stats)
  status.finish()
  const seconds = ((now() - startMs) / 1000).toFixed(0)
  const { sent, pending } = result.stats
  if (result.fatal !== undefined) {
    console.error(`simulate: ${result.fatal}`)
    console.error(`simulate: gave up after ${seconds} s; ${sent} events sent, ${pending} not sent`)
    return 1
  }
  console.log(`simulate: stopped after ${seconds} s; ${sent} events sent` + (pending > 0 ? `, ${pending} due were not sent` : ''))
  return 0
}

function formatSpeedup (speedup: number): string {
  return speedup < 10 ? `${speedup.toFixed(1)} times` : `${Math.round(speedup)} times`
}

/** One line: rewritten in place on a terminal, printed every LOG_STATUS_EVERY_MS elsewhere. */
class StatusLine {
  #stats: Readonly<PosterStats> | undefined
  /** (time, sent) pairs of the recent past, oldest first, for the rate. */
  #samples: { atMs: number, sent: number }[] = [{ atMs: now(), sent: 0 }]
  #shown = false

  constructor (readonly tty: boolean) {}

  update (stats: Readonly<PosterStats>): void {
    this.#stats = { ...stats }
    const atMs = now()
    this.#samples.push({ atMs, sent: stats.sent })
    while (this.#samples.length > 2 && this.#samples[1]!.atMs <= atMs - RATE_WINDOW_MS) this.#samples.shift()
    if (this.tty) {
      process.stdout.write(`\r${this.#text()}\x1b[K`)
      this.#shown = true
    }
  }

  log (): void {
    console.log(`${new Date().toISOString()} ${this.#text()}`)
  }

  /** A line of its own, above the status line. */
  notice (text: string): void {
    if (this.#shown) process.stdout.write('\r\x1b[K')
    console.error(text)
    if (this.#shown) process.stdout.write(this.#text())
  }

  finish (): void {
    if (this.tty) process.stdout.write('\n')
    else this.log()
  }

  #text (): string {
    const stats = this.#stats
    if (stats === undefined) return 'nothing sent yet'
    const first = this.#samples[0]!
    const last = this.#samples[this.#samples.length - 1]!
    const rate = last.atMs > first.atMs ? (last.sent - first.sent) * 1000 / (last.atMs - first.atMs) : 0
    return `sent ${stats.sent}, written ${stats.written}, unchanged ${stats.unchanged}, refused ${stats.refused}, ` +
      `errors ${stats.errors}, last HTTP ${stats.lastStatus ?? '-'}, ${rate.toFixed(2)} events/s` +
      (stats.pending > 0 ? `, ${stats.pending} waiting` : '')
  }
}

process.exitCode = await main()
