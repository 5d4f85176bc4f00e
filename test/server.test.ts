import t from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { once } from 'node:events'
import { projectRoot } from '../src/project-root.js'
import { fixturesDir } from './helper.js'

const fixtureEnv = {
  EVENTS_FILE: join(fixturesDir, 'events.ndjson'),
  ENTITIES_FILE: join(fixturesDir, 'entities.json'),
  SPECIFICATIONS_FILE: join(fixturesDir, 'specifications.json')
}

/** Starts src/server.ts as `npm start` would run it, with only the given variables. */
function startServer (env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'server.ts')], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)
      if (match !== null) resolve(match[1]!)
    })
    exited.then(() => reject(new Error(`exited before listening: ${stderr}`)), reject)
  })
  // Tests of failed start-ups wait on `exited` and never on `listening`.
  listening.catch(() => {})
  return { child, exited, listening, output: () => ({ stdout, stderr }) }
}

t.test('a bad variable stops start-up with a message naming it', async (t) => {
  const server = startServer({ ...fixtureEnv, PORT: 'eighty' })
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, 'Configuration error: PORT must be a TCP port number')
})

t.test('a bad data file stops start-up with a message naming it, before listening', async (t) => {
  const dir = t.testdir({ 'entities.json': '{"devices": [], "spaces": [{"id": "a"}, {"id": "a"}], "tags": []}' })
  const server = startServer({ ...fixtureEnv, ENTITIES_FILE: join(dir, 'entities.json') })
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, `Cannot start: ${join(dir, 'entities.json')}: entry spaces[1].id`)
  t.notMatch(server.output().stdout, 'Server listening')
})

t.test('without API_TOKENS a token is generated, printed once, and required', async (t) => {
  const server = startServer(fixtureEnv)
  t.teardown(() => { server.child.kill('SIGKILL') })
  const base = await server.listening
  const token = /Authorization: Bearer (\S+)/.exec(server.output().stdout)?.[1]
  t.ok(token, 'the token is printed')
  t.equal(server.output().stdout.split(token!).length - 1, 1, 'printed once')
  const url = `${base}/svc/v2/events?start_date=2024-01-01T00:00:00Z&device_ids=soap-001`
  t.equal((await fetch(url)).status, 401, 'no token: 401')
  const answer = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  t.equal(answer.status, 200)
  t.equal(((await answer.json()) as { data: unknown[] }).data.length, 5)
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'a graceful shutdown on SIGTERM')
})

t.test('with API_TOKENS only those tokens work and none is printed', async (t) => {
  const server = startServer({ ...fixtureEnv, API_TOKENS: 'alpha,beta' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const base = await server.listening
  t.notMatch(server.output().stdout, 'Authorization: Bearer')
  const url = `${base}/svc/v2/event_specifications`
  t.equal((await fetch(url, { headers: { authorization: 'Bearer beta' } })).status, 200)
  t.equal((await fetch(url, { headers: { authorization: 'Bearer gamma' } })).status, 401)
})

t.test('WORKERS=2 serves from two processes on one port and stops gracefully', async (t) => {
  const server = startServer({ ...fixtureEnv, WORKERS: '2' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const base = await server.listening
  const token = /Authorization: Bearer (\S+)/.exec(server.output().stdout)?.[1]
  t.equal(server.output().stdout.split('Authorization: Bearer').length - 1, 1, 'the generated token is printed once')
  const twoListening = /Server listening[\s\S]*Server listening/
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && !twoListening.test(server.output().stdout)) await new Promise((resolve) => setTimeout(resolve, 50))
  for (let i = 0; i < 4; i++) {
    const answer = await fetch(`${base}/svc/v2/events?start_date=2024-01-01T00:00:00Z&device_ids=soap-001`, { headers: { authorization: `Bearer ${token}` } })
    t.equal(answer.status, 200, 'the workers accept the one generated token')
    await answer.arrayBuffer()
  }
  t.match(server.output().stdout, /Server listening[\s\S]*Server listening/, 'two workers listen')
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'a graceful shutdown on SIGTERM')
})

t.test('WORKERS=2 with a bad data file stops start-up', async (t) => {
  const server = startServer({ ...fixtureEnv, WORKERS: '2', EVENTS_FILE: join(fixturesDir, 'no-such.ndjson') })
  t.equal(await server.exited, 1)
  t.match(server.output().stderr, 'no-such.ndjson: cannot be read')
})
