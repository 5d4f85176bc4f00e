import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { get } from 'node:http'
import { fixtureServerEnv, startServer } from '../server-process.js'
import { SseClient } from './sse-client.js'

/** One GET on a connection of its own (the cluster gives each new connection to the next worker). */
function freshGet (url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { headers, agent: false }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => resolve(body))
    }).on('error', reject)
  })
}

/**
 * A provider of two workers on the fixtures, once both listen: its base URL, its primary's
 * output, how many times a worker has listened, its workers' pids, and a poll until a condition
 * holds (or `ms` pass).
 */
async function twoWorkers (t: Test) {
  const env = fixtureServerEnv(t.testdir())
  const server = startServer({ ...env, WORKERS: '2' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const base = await server.listening
  const listening = () => server.output().stdout.split('Server listening').length - 1
  const until = async (done: () => boolean, ms = 30_000) => {
    const deadline = Date.now() + ms
    while (Date.now() < deadline && !done()) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const children = () => {
    try {
      // The workers only (they run the server; tsx may have a helper process of its own).
      return execFileSync('pgrep', ['-P', String(server.child.pid), '-f', 'server\\.ts'], { encoding: 'utf8' }).trim().split('\n').filter((pid) => pid !== '')
    } catch {
      return []
    }
  }
  await until(() => listening() === 2)
  return { env, eventsFile: env.EVENTS_FILE!, server, base, listening, until, children }
}

t.test('WORKERS=2: an event ingested on one worker is served and pushed by every worker within a second', async (t) => {
  const env = fixtureServerEnv(t.testdir())
  const eventsFile = env.EVENTS_FILE!
  const server = startServer({ ...env, WORKERS: '2' })
  t.teardown(() => { server.child.kill('SIGKILL') })
  const base = await server.listening
  const reader = { authorization: 'Bearer reader' }
  const clients = Array.from({ length: 6 }, () => new SseClient(`${base}/svc/v2/events/stream?device_ids=soap-001`, reader))
  t.teardown(() => { for (const client of clients) client.close() })
  await Promise.all(clients.map((client) => client.until((c) => c.status === 200, 10_000)))
  const line = JSON.stringify({ message_id: 'cluster-1', message_code: 'EMPTY', message_category: 'alert', date_time: '2025-06-01T00:00:00.000Z', device_id: 'soap-001', space_id: 'bldg-a/floor-1' })
  const posted = await fetch(`${base}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson' }, body: line })
  t.same(await posted.json(), { written: 1, unchanged: 0, refused: [] })
  await Promise.all(clients.map((client) => client.until((c) => c.messages.length === 1, 1000, 'the event on every stream within a second')))
  const cursors = new Set(clients.map((client) => client.messages[0]!.id))
  t.equal(cursors.size, 1, 'every worker gives the event the same cursor')

  const answers = await Promise.all(Array.from({ length: 6 }, () => freshGet(`${base}/svc/v2/events?start_date=2025-05-31T00:00:00Z`, reader)))
  for (const body of answers) t.match(body, '"message_id":"cluster-1"', 'every worker serves it')
  t.equal(readFileSync(eventsFile, 'utf8').split('cluster-1').length - 1, 1, 'in the file once')

  const again = await fetch(`${base}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson', connection: 'close' }, body: line })
  t.same(await again.json(), { written: 0, unchanged: 1, refused: [] }, 'the other worker knows it too')

  // Resumed on every worker (each keeps its own log of what the primary handed out): the event
  // after the cursor, byte for byte as it went out live.
  const next = line.replace('cluster-1', 'cluster-2').replace('00:00:00.000Z', '00:00:01.000Z')
  const second = await fetch(`${base}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson', connection: 'close' }, body: next })
  t.same(await second.json(), { written: 1, unchanged: 0, refused: [] })
  await Promise.all(clients.map((client) => client.until((c) => c.messages.length === 2, 1000, 'the second event on every stream')))
  const resumed = Array.from({ length: 6 }, () => new SseClient(`${base}/svc/v2/events/stream?device_ids=soap-001`, { ...reader, 'last-event-id': clients[0]!.messages[0]!.id! }))
  t.teardown(() => { for (const client of resumed) client.close() })
  await Promise.all(resumed.map((client) => client.until((c) => c.messages.length === 1, 5000, 'the resumed event')))
  for (const client of resumed) {
    t.same({ id: client.messages[0]!.id, data: client.messages[0]!.data }, { id: clients[0]!.messages[1]!.id, data: clients[0]!.messages[1]!.data }, 'resumed as it went out live')
  }
})

t.test('WORKERS=2: a worker started again while the other ingests serves every event acknowledged meanwhile, and judges their IDs', async (t) => {
  const { eventsFile, server, base, listening, until, children } = await twoWorkers(t)
  const workers = children()
  const line = (i: number) => JSON.stringify({ message_id: `restart-${i}`, message_code: 'EMPTY', message_category: 'alert', date_time: new Date(Date.UTC(2025, 5, 1) + i * 1000).toISOString(), device_id: 'soap-001', space_id: 'bldg-a/floor-1' })
  const post = async (i: number) => {
    const answer = await fetch(`${base}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson' }, body: line(i) + '\n', signal: AbortSignal.timeout(5000) })
    return answer.status === 200 ? (await answer.json() as { written: number }).written : 0
  }
  // One worker killed; until its replacement listens, the other takes a stream of ingests. (A
  // connection the primary hands to a worker that has just died is never answered, Node's
  // cluster: the posts begin once the primary knows, and a post is given up after 5 s.)
  process.kill(Number(workers[0]), 'SIGKILL')
  await until(() => /died/.test(server.output().stderr))
  let acknowledged = 0
  let next = 0
  const first = new Set<number>()
  const posted = async (i: number) => {
    const written = await post(i).catch(() => 0)
    if (written === 1) first.add(i)
    return written
  }
  while (listening() < 3 && next < 20_000) acknowledged += await posted(next++)
  const duringRestart = acknowledged
  for (let i = 0; i < 50; i++) acknowledged += await posted(next++)
  t.ok(duringRestart > 0, `${duringRestart} events acknowledged while the worker came back`)
  const written = readFileSync(eventsFile, 'utf8').split('\n').filter((text) => text.includes('"restart-')).length
  t.equal(written, acknowledged, 'each in the file once')
  for (let i = 0; i < 6; i++) {
    const body = await freshGet(`${base}/svc/v2/events?start_date=2025-01-01T00:00:00Z&device_ids=soap-001`, { authorization: 'Bearer reader' })
    t.equal(body.split('"restart-').length - 1, acknowledged, `answer ${i + 1}: every acknowledged event, on either worker`)
  }
  // An acknowledged ID posted again with other fields is refused by either worker.
  for (let i = 0; i < 4; i++) {
    const answer = await fetch(`${base}/ingest/events`, { method: 'POST', headers: { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson', connection: 'close' }, body: line([...first][0]!).replace('"EMPTY"', '"LOW"') + '\n' })
    t.equal(((await answer.json()) as { refused: unknown[] }).refused.length, 1, 'refused, not written again')
  }
})

t.test('WORKERS=2: a replacement worker killed before it listens does not stop the provider: the other serves on, and another replaces it', async (t) => {
  const { server, base, listening, until, children } = await twoWorkers(t)
  const first = children()
  process.kill(Number(first[0]), 'SIGKILL')
  let replacement: string | undefined
  await until(() => (replacement = children().find((pid) => !first.includes(pid))) !== undefined, 10_000)
  t.ok(replacement !== undefined, 'a replacement was started')
  process.kill(Number(replacement), 'SIGKILL')
  await until(() => /replacement worker stopped before it listened/.test(server.output().stderr), 10_000)
  t.match(server.output().stderr, /replacement worker stopped before it listened \(SIGKILL\); starting another in 1 s/)
  t.equal(listening(), 2, 'the replacement never listened')
  t.equal(server.child.exitCode, null, 'the provider runs on')
  // Connections made now go to the worker that serves (Node's cluster hands none to a worker not listening).
  const served = await fetch(`${base}/svc/v2/events?start_date=2025-01-01T00:00:00Z`, { headers: { authorization: 'Bearer reader', connection: 'close' }, signal: AbortSignal.timeout(5000) })
  t.equal(served.status, 200, 'served meanwhile')
  await until(() => listening() === 3, 20_000)
  t.equal(listening(), 3, 'another replacement listens after the pause')
  t.equal(children().length, 2, 'two workers again')
})

t.test('WORKERS=2: events a worker appended and died before announcing are taken by the other, which serves, pushes and judges them', async (t) => {
  const { appendFileSync } = await import('node:fs')
  const { eventsFile, base, listening, until, children } = await twoWorkers(t)
  const reader = { authorization: 'Bearer reader' }
  const clients = Array.from({ length: 6 }, () => new SseClient(`${base}/svc/v2/events/stream?device_ids=soap-001`, reader))
  t.teardown(() => { for (const client of clients) client.close() })
  await Promise.all(clients.map((client) => client.until((c) => c.status === 200, 10_000)))
  // What a worker killed between its append and its announcement leaves: a line at the file's
  // end that no worker was told of. Then a worker dies (here one that wrote nothing).
  const line = JSON.stringify({ message_id: 'orphan-1', message_code: 'EMPTY', message_category: 'alert', date_time: '2025-06-01T00:00:00.000Z', device_id: 'soap-001', space_id: 'bldg-a/floor-1' })
  appendFileSync(eventsFile, line + '\n')
  process.kill(Number(children()[0]), 'SIGKILL')
  await until(() => clients.every((client) => client.ended || client.messages.length > 0), 10_000)
  // Time for a second push, should there be one.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const open = clients.filter((client) => !client.ended)
  t.ok(open.length > 0, `${open.length} streams on the worker that lives`)
  for (const client of open) t.same(client.messages.map((frame) => JSON.parse(frame.data!).message_id), ['orphan-1'], 'pushed once on every stream of the worker that lives')
  await until(() => listening() === 3)
  for (let i = 0; i < 6; i++) {
    t.match(await freshGet(`${base}/svc/v2/events?start_date=2025-05-31T00:00:00Z`, reader), '"message_id":"orphan-1"', `answer ${i + 1}: served by either worker`)
  }
  for (let i = 0; i < 4; i++) {
    const headers = { authorization: 'Bearer writer', 'content-type': 'application/x-ndjson', connection: 'close' }
    const same = await fetch(`${base}/ingest/events`, { method: 'POST', headers, body: line })
    t.same(await same.json(), { written: 0, unchanged: 1, refused: [] }, 'posted again: unchanged, on either worker')
    const other = await fetch(`${base}/ingest/events`, { method: 'POST', headers, body: line.replace('"EMPTY"', '"LOW"') })
    t.equal(((await other.json()) as { refused: unknown[] }).refused.length, 1, 'another event with its ID: refused')
  }
  t.equal(readFileSync(eventsFile, 'utf8').split('orphan-1').length - 1, 1, 'in the file once')
})

t.test('WORKERS=2: with no worker left serving, a replacement that stops before it listens stops the provider (exit 1)', async (t) => {
  const { server, until, children } = await twoWorkers(t)
  const first = children()
  // 'close': once its output is read too ('exit' may come before the last of it).
  const exited = once(server.child, 'close')
  for (const pid of first) process.kill(Number(pid), 'SIGKILL')
  // Each replacement killed as it appears, before it can listen.
  const killed = new Set(first)
  await until(() => {
    for (const pid of children()) {
      if (killed.has(pid)) continue
      killed.add(pid)
      try { process.kill(Number(pid), 'SIGKILL') } catch {}
    }
    return server.child.exitCode !== null
  }, 20_000)
  const [code] = await Promise.race([exited, new Promise<[string]>((resolve) => setTimeout(() => resolve(['still running']), 5000))])
  t.equal(code, 1, `exit 1 (got ${String(code)}); stderr: ${server.output().stderr.slice(-1500)}`)
  t.match(server.output().stderr, /replacement worker stopped before it listened \(exit code SIGKILL\) and no worker serves; stopping/)
})
