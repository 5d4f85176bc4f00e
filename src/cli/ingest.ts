import { existsSync } from 'node:fs'
import { ConfigError, loadConfig } from '../config.js'
import { ingestFile, type IngestSummary } from '../ingest/ingest-file.js'
import type { EventWriter } from '../store/event-writer.js'

const USAGE = 'usage: npm run ingest -- FILE.ndjson   (the store comes from STORE and its variables, as for npm start)'

/** How many refused lines the summary lists one by one before it only counts. */
const LISTED_REFUSALS = 100

function writerFor (env: NodeJS.ProcessEnv): { writer: EventWriter, target: string } {
  const { store } = loadConfig(env)
  return { writer: store.openWriter(), target: store.target }
}

async function main (argv: string[]): Promise<number> {
  const files = argv.filter((arg) => !arg.startsWith('-'))
  if (files.length !== 1 || argv.length !== 1) {
    console.error(USAGE)
    return 2
  }
  const file = files[0]!
  if (!existsSync(file)) {
    console.error(`${file}: no such file`)
    return 2
  }
  let opened
  try {
    opened = writerFor(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`)
      return 1
    }
    throw error
  }
  const { writer, target } = opened
  console.log(`Ingesting ${file} into ${target}`)
  const started = Date.now()
  const progress = process.stderr.isTTY
    ? (summary: Readonly<IngestSummary>) => {
        const seconds = (Date.now() - started) / 1000
        process.stderr.write(`\r${summary.lines} lines read, ${summary.written} written, ${summary.unchanged} unchanged, ${summary.refused.length} refused (${Math.round(summary.lines / Math.max(seconds, 0.001))} lines/s)`)
      }
    : undefined
  let summary: IngestSummary
  try {
    summary = await ingestFile(file, writer, { onProgress: progress })
  } catch (error) {
    if (progress !== undefined) process.stderr.write('\n')
    console.error(`Ingest stopped: ${(error as Error).message}`)
    console.error('Events of the batches before this one are stored; running the ingest again is safe.')
    return 1
  } finally {
    await writer.close()
  }
  if (progress !== undefined) process.stderr.write('\n')
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  console.log(`${summary.lines} lines in ${seconds} s: ${summary.written} written, ${summary.unchanged} already stored, ${summary.refused.length} refused`)
  for (const refusal of summary.refused.slice(0, LISTED_REFUSALS)) console.log(`  line ${refusal.line}: ${refusal.reason}`)
  if (summary.refused.length > LISTED_REFUSALS) console.log(`  … and ${summary.refused.length - LISTED_REFUSALS} more refused lines`)
  return summary.refused.length === 0 ? 0 : 1
}

process.exitCode = await main(process.argv.slice(2))
