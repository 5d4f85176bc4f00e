import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../src/project-root.js'

t.test('the container starts node with the same flags as npm start', async (t) => {
  const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { config: { nodeFlags: string } }
  const flags = manifest.config.nodeFlags.split(/\s+/).filter((flag) => flag !== '')
  t.ok(flags.includes('--expose-gc'), 'the memory store can collect its load garbage')
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(projectRoot, 'Dockerfile'), 'utf8'))
  t.ok(cmd, 'the Dockerfile has an exec-form CMD')
  t.same(JSON.parse(cmd![1]!), ['node', ...flags, 'dist/src/server.js'])
})
