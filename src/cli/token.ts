import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { Value } from '@sinclair/typebox/value'
import { TokenName, type TokenEntry } from '../../schemas/tokens.js'
import { tokenDigest } from '../http/bearer-token.js'

const USAGE = `usage: npm run token -- --name NAME [--tag ID]... [--space ID]... [--device ID]... [--ingest]

Prints a new random bearer token, once, and the entry to add to TOKENS_FILE (which keeps only its
SHA-256). Without --tag, --space or --device the token sees every entity; with them, only the
events of those devices and spaces (a tag's members). --ingest also lets it post events.`

/** A new token and its TOKENS_FILE entry, from the command's arguments; throws a usage message. */
export function newToken (argv: readonly string[]): { token: string, entry: TokenEntry } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      name: { type: 'string' },
      tag: { type: 'string', multiple: true },
      space: { type: 'string', multiple: true },
      device: { type: 'string', multiple: true },
      ingest: { type: 'boolean' }
    },
    strict: true,
    allowPositionals: false
  })
  if (values.name === undefined || !Value.Check(TokenName, values.name)) throw new Error(`--name must be ${TokenName.description!}\n\n${USAGE}`)
  const token = randomBytes(32).toString('base64url')
  const entry: TokenEntry = { name: values.name, sha256: tokenDigest(token) }
  const scope: TokenEntry['scope'] = {}
  if (values.tag !== undefined) scope.tag_ids = values.tag
  if (values.space !== undefined) scope.space_ids = values.space
  if (values.device !== undefined) scope.device_ids = values.device
  if (Object.keys(scope).length > 0) entry.scope = scope
  if (values.ingest === true) entry.ingest = true
  return { token, entry }
}

/** The command: prints the token and its entry (0), the usage asked for with --help or -h (0), or a usage error (2). */
export function main (argv: readonly string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  let made
  try {
    made = newToken(argv)
  } catch (error) {
    console.error((error as Error).message.startsWith('usage') ? USAGE : `${(error as Error).message}\n\n${USAGE}`)
    return 2
  }
  console.log(`The token (shown once; give it to ${made.entry.name}):\n  ${made.token}\n`)
  console.log(`Add this entry to the "tokens" list of TOKENS_FILE (the provider reloads the file when it changes):\n${JSON.stringify(made.entry, null, 2)}`)
  return 0
}

if (process.argv[1]?.endsWith('token.js') === true) process.exitCode = main(process.argv.slice(2))
