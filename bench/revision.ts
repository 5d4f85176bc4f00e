import { spawnSync } from 'node:child_process'
import { projectRoot } from '../src/project-root.js'

/** Which provider code was measured: the commit, and the provider files changed since it. */
export interface Revision {
  commit: string | undefined
  /** Paths relative to the project, from git status (the provider's own folders only). */
  uncommittedFiles: string[]
}

export function providerRevision (): Revision {
  const git = (args: string[]) => spawnSync('git', args, { cwd: projectRoot, encoding: 'utf8' })
  const head = git(['rev-parse', '--short', 'HEAD'])
  const status = git(['status', '--porcelain', '--', 'src', 'plugins', 'schemas'])
  return {
    commit: head.status === 0 ? head.stdout.trim() : undefined,
    uncommittedFiles: status.status === 0
      ? status.stdout.split('\n').filter((line) => line.trim() !== '').map((line) => line.slice(3))
      : []
  }
}
