import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { demoDataDir } from '../project-root.js'
import { OptionError } from './generate-options.js'

export { OptionError }

export interface SimulateOptions {
  /** The provider's POST /ingest/events. */
  endpoint: URL
  token: string
  /** Events per second on average. */
  rate: number
  entitiesFile: string
  /** undefined: the hand-written catalog of the demo data. */
  specificationsFile: string | undefined
  /** undefined: a random seed, told at the start. */
  seed: number | undefined
}

export type SimulateCommand =
  | { help: true }
  | { help: false, options: SimulateOptions }

export const DEFAULT_SIMULATE_RATE = 5
export const MAX_SIMULATE_RATE = 10_000
export const INGEST_PATH = '/ingest/events'

export const USAGE = `Usage: npm run simulate -- --url URL --token TOKEN [options]

Posts live demo events to a provider's POST ${INGEST_PATH} until stopped (Ctrl-C):
devices and spaces of the entities file telling the demo generator's stories, dated now.

  --url URL               the provider's base URL, like http://localhost:8080
  --token TOKEN           one of the provider's INGEST_TOKENS
  --rate R                events per second on average (default ${DEFAULT_SIMULATE_RATE}, at most ${MAX_SIMULATE_RATE})
  --entities FILE         the provider's entities file (default $ENTITIES_FILE, else data/entities.json)
  --specifications FILE   its message codes (default $SPECIFICATIONS_FILE, else data/specifications.json;
                          none: the demo's hand-written codes)
  --seed N                seed of the random choices (default: a random one, told at the start)
  --help                  show this text

Exit codes: 0 stopped, 1 the provider refused the token or the requests, 2 bad options or files.`

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  rate: { type: 'string' },
  entities: { type: 'string' },
  specifications: { type: 'string' },
  seed: { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

/** What a provider can accept as a bearer token (src/http/bearer-token.ts). */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/** Reads the simulator's command line (without node and the script); env gives the defaults of the files. */
export function parseSimulateOptions (args: readonly string[], env: NodeJS.ProcessEnv = {}): SimulateCommand {
  let parsed
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false, tokens: true })
  } catch (error) {
    const message = (error as Error).message
    throw new OptionError(/'([^']*)'/.exec(message)?.[1]?.split(' ')[0] ?? '', message.split('\n')[0]!)
  }
  const { values, tokens } = parsed
  const seen = new Set<string>()
  for (const token of tokens) {
    if (token.kind !== 'option') continue
    if (seen.has(token.name)) throw new OptionError(`--${token.name}`, `--${token.name} is given more than once`)
    seen.add(token.name)
  }
  if (values.help === true) return { help: true }

  if (values.url === undefined) throw new OptionError('--url', '--url is required')
  let base: URL
  try {
    base = new URL(values.url)
  } catch {
    throw new OptionError('--url', `--url must be an http:// or https:// URL; got ${JSON.stringify(values.url)}`)
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new OptionError('--url', `--url must be an http:// or https:// URL; got ${JSON.stringify(values.url)}`)
  }
  if (values.token === undefined) throw new OptionError('--token', '--token is required')
  if (!TOKEN.test(values.token)) {
    throw new OptionError('--token', '--token must be a bearer token: letters, digits and -._~+/, optionally ending in =')
  }
  const rate = values.rate === undefined ? DEFAULT_SIMULATE_RATE : positiveNumber('rate', values.rate, MAX_SIMULATE_RATE)
  const seed = values.seed === undefined ? undefined : integer('seed', values.seed)
  const entitiesFile = file('entities', values.entities) ?? nonEmpty(env.ENTITIES_FILE) ?? join(demoDataDir, 'entities.json')
  const specificationsFile = file('specifications', values.specifications) ?? nonEmpty(env.SPECIFICATIONS_FILE) ?? join(demoDataDir, 'specifications.json')
  return {
    help: false,
    options: {
      endpoint: ingestEndpoint(base),
      token: values.token,
      rate,
      entitiesFile,
      specificationsFile: specificationsFile === 'none' ? undefined : specificationsFile,
      seed
    }
  }
}

/** The base URL's path with /ingest/events after it (unless it is already there); no query. */
export function ingestEndpoint (base: URL): URL {
  const endpoint = new URL(base.href)
  endpoint.search = ''
  endpoint.hash = ''
  const path = endpoint.pathname.replace(/\/+$/, '')
  endpoint.pathname = path.endsWith(INGEST_PATH) ? path : path + INGEST_PATH
  return endpoint
}

function file (name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  if (value.trim() === '') throw new OptionError(`--${name}`, `--${name} must name a file`)
  return value
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

function positiveNumber (name: string, text: string, max: number): number {
  const value = Number(text)
  if (!/^(\d+\.?\d*|\.\d+)$/.test(text) || !(value > 0) || value > max) {
    throw new OptionError(`--${name}`, `--${name} must be a number above 0 and at most ${max}; got ${JSON.stringify(text)}`)
  }
  return value
}

function integer (name: string, text: string): number {
  const value = Number(text)
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new OptionError(`--${name}`, `--${name} must be an integer; got ${JSON.stringify(text)}`)
  }
  return value
}
