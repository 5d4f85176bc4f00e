import { parseArgs } from 'node:util'
import { BASE_CODE_COUNT } from '../demo/catalog.js'
import { DAY_MS } from '../demo/daily-rhythm.js'
import type { DatasetOptions } from '../demo/generate-dataset.js'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS, ceilMs, parseRfc3339 } from '../time/rfc3339.js'

/** A command line the generator cannot run; the message names the option. */
export class OptionError extends Error {
  override name = 'OptionError'

  constructor (readonly option: string, message: string) {
    super(message)
  }
}

export type GenerateCommand =
  | { help: true }
  | { help: false, options: DatasetOptions }

export const DEFAULT_RATE = 0.5
export const DEFAULT_SEED = 1

export const USAGE = `Usage: npm run generate -- --devices N --spaces N --days D --out DIR [options]

Writes a seeded demo data set: DIR/events.ndjson, DIR/entities.json, DIR/specifications.json.

  --devices N     number of devices (0 or more)
  --spaces N      number of spaces (1 or more)
  --days D        length of the period in days
  --out DIR       folder to write into (created when missing)
  --codes N       number of message codes (default ${BASE_CODE_COUNT}, the hand-written ones; more adds numbered fault codes)
  --seed N        seed of the random choices (default ${DEFAULT_SEED}); the same options give the same files
  --end DATE      RFC 3339 date-time, the exclusive end of the period (default today 00:00:00Z)
  --rate R        average events per device or space per day (default ${DEFAULT_RATE})
  --help          show this text`

const OPTIONS = {
  devices: { type: 'string' },
  spaces: { type: 'string' },
  days: { type: 'string' },
  out: { type: 'string' },
  codes: { type: 'string' },
  seed: { type: 'string' },
  end: { type: 'string' },
  rate: { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

/** Reads the generator's command line (without node and the script); nowMs sets the default --end. */
export function parseGenerateOptions (args: readonly string[], nowMs: number): GenerateCommand {
  const { values, tokens } = parseCommandLine(args)
  const seen = new Set<string>()
  for (const token of tokens) {
    if (token.kind !== 'option') continue
    if (seen.has(token.name)) throw new OptionError(`--${token.name}`, `--${token.name} is given more than once`)
    seen.add(token.name)
  }
  if (values.help === true) return { help: true }

  const required = (name: 'devices' | 'spaces' | 'days' | 'out'): string => {
    const value = values[name]
    if (value === undefined) throw new OptionError(`--${name}`, `--${name} is required`)
    return value
  }
  const devices = integer('devices', required('devices'), 0, 1_000_000)
  const spaces = integer('spaces', required('spaces'), 1, 1_000_000)
  const days = integer('days', required('days'), 1, 100_000)
  const outDir = required('out')
  if (outDir.trim() === '') throw new OptionError('--out', '--out must name a folder')
  const codes = values.codes === undefined ? BASE_CODE_COUNT : integer('codes', values.codes, 1, 100_000)
  const seed = values.seed === undefined ? DEFAULT_SEED : integer('seed', values.seed, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  const rate = values.rate === undefined ? DEFAULT_RATE : decimal('rate', values.rate, 0, 1000)

  let endMs = Math.floor(nowMs / DAY_MS) * DAY_MS
  if (values.end !== undefined) {
    const end = parseRfc3339(values.end)
    if (end === undefined) throw new OptionError('--end', `--end must be an RFC 3339 date-time such as 2026-11-01T00:00:00Z; got ${JSON.stringify(values.end)}`)
    endMs = ceilMs(end)
  }
  if (endMs - days * DAY_MS < EVENT_TIME_MIN_MS || endMs > EVENT_TIME_MAX_MS) {
    throw new OptionError('--end', '--end and --days must keep the period between 1678-01-01 and 2262-01-01')
  }
  return { help: false, options: { devices, spaces, days, codes, seed, endMs, rate, outDir } }
}

function parseCommandLine (args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false, tokens: true })
  } catch (error) {
    // Node's messages quote the offending option or argument: 'Unknown option '--foo''.
    const message = (error as Error).message
    const quoted = /'([^']*)'/.exec(message)?.[1]?.split(' ')[0] ?? ''
    throw new OptionError(quoted, message.split('\n')[0]!)
  }
}

function integer (name: string, text: string, min: number, max: number): number {
  const value = Number(text)
  if (!/^[+-]?\d+$/.test(text) || value < min || value > max) {
    throw new OptionError(`--${name}`, `--${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(text)}`)
  }
  return value
}

function decimal (name: string, text: string, min: number, max: number): number {
  const value = Number(text)
  if (!/^(\d+\.?\d*|\.\d+)$/.test(text) || value < min || value > max) {
    throw new OptionError(`--${name}`, `--${name} must be a number from ${min} to ${max}; got ${JSON.stringify(text)}`)
  }
  return value
}
