import { generateDataset } from '../demo/generate-dataset.js'
import { OptionError, USAGE, parseGenerateOptions, type GenerateCommand } from './generate-options.js'

/** `npm run generate -- --devices N --spaces N --days D --out DIR …`: see USAGE. Exit codes: 2 bad options, 1 failure. */
async function main (): Promise<void> {
  let command: GenerateCommand
  try {
    command = parseGenerateOptions(process.argv.slice(2), Date.now())
  } catch (error) {
    if (!(error instanceof OptionError)) throw error
    console.error(`generate: ${error.message}\n\n${USAGE}`)
    process.exitCode = 2
    return
  }
  if (command.help) {
    console.log(USAGE)
    return
  }

  const { options } = command
  const started = performance.now()
  try {
    const summary = await generateDataset(options)
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(`generate: ${summary.events} events from ${new Date(summary.startMs).toISOString()} to ${new Date(summary.endMs).toISOString()}, ` +
      `${summary.devices} devices (${summary.moves} moves), ${summary.spaces} spaces, ${summary.tags} tags, ${summary.codes} message codes ` +
      `written to ${options.outDir} in ${seconds} s`)
  } catch (error) {
    console.error(`generate: ${(error as Error).message}`)
    process.exitCode = 1
  }
}

await main()
