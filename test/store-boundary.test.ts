import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { projectRoot } from '../src/project-root.js'

// The store layer is below the HTTP layer: nothing under src/store/ may reach up into the
// answer's rendering, the routes or the Fastify plugins.
const storeDir = join(projectRoot, 'src', 'store')
const forbidden = ['src/events', 'src/routes', 'plugins'].map((dir) => join(projectRoot, dir))

function * sourceFiles (dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield * sourceFiles(path)
    else if (entry.name.endsWith('.ts')) yield path
  }
}

t.test('no module under src/store imports from src/events, src/routes or plugins', async (t) => {
  let checked = 0
  for (const file of sourceFiles(storeDir)) {
    const text = readFileSync(file, 'utf8')
    for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
      const target = resolve(file, '..', specifier!)
      const reaching = forbidden.find((dir) => target === dir || target.startsWith(dir + '/'))
      t.equal(reaching, undefined, `${relative(projectRoot, file)} imports ${specifier}`)
      checked++
    }
  }
  t.ok(checked > 20, `${checked} imports checked`)
})
