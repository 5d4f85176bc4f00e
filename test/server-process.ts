import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { once } from 'node:events'
import { copyFileSync } from 'node:fs'
import { projectRoot } from '../src/project-root.js'
import { fixturesDir } from './helper.js'

/** Starts src/server.ts as `npm start` would run it, with only the given variables. */
export function startServer (env: Record<string, string>, options: { detached?: boolean } = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'server.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, to be signalled as a whole (as a terminal's Ctrl-C or systemd do).
    detached: options.detached === true
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /Server listening at (https?:\/\/127\.0\.0\.1:\d+)/.exec(stdout)
      if (match !== null) resolve(match[1]!)
    })
    exited.then(() => reject(new Error(`exited before listening: ${stderr}`)), reject)
  })
  // Tests of failed start-ups wait on `exited` and never on `listening`.
  listening.catch(() => {})
  return { child, exited, listening, output: () => ({ stdout, stderr }) }
}

/**
 * The fixtures' data files for a started server, with a copy of their events in `dir` that the
 * server may append to, and the read and ingest tokens the live tests use (`reader`, `writer`).
 */
export function fixtureServerEnv (dir: string, name = 'events'): Record<string, string> {
  const eventsFile = join(dir, `${name}.ndjson`)
  copyFileSync(join(fixturesDir, 'events.ndjson'), eventsFile)
  return {
    EVENTS_FILE: eventsFile,
    ENTITIES_FILE: join(fixturesDir, 'entities.json'),
    SPECIFICATIONS_FILE: join(fixturesDir, 'specifications.json'),
    API_TOKENS: 'reader',
    INGEST_TOKENS: 'writer'
  }
}
