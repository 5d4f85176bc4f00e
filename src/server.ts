import type { Config } from './config.js'

// A hang-up (SIGHUP) is the reload signal (src/data/reloadable-file.ts), never a shutdown, but
// until a process has a handler for it Node's default ends the process. ES modules run only once
// their whole static graph is loaded and linked (the app's: about 0.2 s compiled, more under
// tsx), so this module imports nothing else statically and installs the handler first, the rest
// after it. The data files' own handlers come and go with the app's plugins; this one covers the
// start-up's load and the shutdown's grace too (logrotate's postrotate, a config-sync sidecar).
process.on('SIGHUP', () => {})

const [{ default: cluster }, { default: closeWithGrace }, { buildApp }, { runClusterPrimary }, { ConfigError, loadConfig }, { DataFileError }, { keepNextTickShape }] = await Promise.all([
  import('node:cluster'),
  import('close-with-grace'),
  import('./app.js'),
  import('./cluster-primary.js'),
  import('./config.js'),
  import('./data/data-file-error.js'),
  import('./runtime/next-tick-shape.js')
])

async function start (): Promise<void> {
  // Before anything runs a full collection (the memory store runs one after loading).
  await keepNextTickShape()
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`)
      process.exit(1)
    }
    throw error
  }

  if (config.workers > 1 && cluster.isPrimary) {
    printGeneratedTokens(config)
    runClusterPrimary(config)
    return
  }

  let app
  try {
    app = await buildApp(config)
  } catch (error) {
    if (error instanceof DataFileError || error instanceof ConfigError) {
      console.error(`Cannot start: ${error.message}`)
      process.exit(1)
    }
    throw error
  }

  printGeneratedTokens(config)

  // SIGHUP is the reload signal (reloadable-file.ts), which close-with-grace would take for a shutdown.
  // A cluster's worker is sent SIGTERM by its primary, and often the same signal directly too:
  // Ctrl-C in a terminal, systemd or `kill -- -PGID` signal the whole process group. The first
  // starts the one shutdown; close-with-grace, seeing a second signal, would exit 1 at once,
  // cutting the answers under way (it does so in a single process, where a second Ctrl-C means it).
  const inCluster = cluster.isWorker
  const grace = closeWithGrace({ delay: 10_000, skip: inCluster ? ['SIGHUP', 'SIGTERM', 'SIGINT'] : ['SIGHUP'] }, async ({ signal, err, manual }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    // A worker's signal is logged where it is taken (below).
    else if (manual !== true) app.log.info({ signal }, 'shutting down')
    await app.close()
  })
  if (inCluster) {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      app.log.info({ signal }, 'shutting down')
      grace.close()
    }
    process.on('SIGTERM', () => { stop('SIGTERM') })
    process.on('SIGINT', () => { stop('SIGINT') })
  }

  try {
    await app.listen({ port: config.port, host: config.host })
  } catch (error) {
    // A host that does not resolve, a port taken or not allowed: the variables are named, as for a bad value.
    console.error(`Cannot start: cannot listen on HOST ${config.host}, PORT ${config.port}: ${(error as Error).message}`)
    await app.close()
    process.exit(1)
  }
}

/** Printed once, on standard output, so a person starting the demo can use them. */
function printGeneratedTokens (config: Config): void {
  if (config.generatedToken) {
    console.log(`No API_TOKENS set: this run accepts the generated consumer token (reads events)\n  Authorization: Bearer ${config.apiTokens[0]!}`)
  }
  if (config.generatedIngestToken) {
    console.log(`No INGEST_TOKENS set: this run accepts the generated ingest token (posts to /ingest/events)\n  Authorization: Bearer ${config.ingestTokens[0]!}`)
  }
}

await start()
