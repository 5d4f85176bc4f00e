import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'

export interface IngestRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `npm run ingest -- FILE` as a user would (through tsx, without the build step). */
export async function runIngest (file: string | undefined, env: Record<string, string>): Promise<IngestRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'cli', 'ingest.ts'), ...(file === undefined ? [] : [file])], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const [code] = await once(child, 'exit')
  return { code: code as number | null, stdout, stderr }
}
