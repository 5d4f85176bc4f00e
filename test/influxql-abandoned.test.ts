import t from 'tap'
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { EventQuery } from '../src/store/event-store.js'
import { InfluxQLBackend, ownStatements, sameStatement } from '../src/store/influx/influxql-backend.js'
import { buildInfluxQLEventQuery } from '../src/store/influx/influxql-query.js'

// A stand-in InfluxDB 1.x: the events query never answers; SHOW QUERIES lists it, re-printed as
// InfluxDB 1.6 prints running queries (identifiers unquoted), beside the same query of another
// request (another consumer asking the same, in this process or another) and another database's.
t.test('a query the provider gives up on is killed in InfluxDB, and not another request\'s of the same text', async (t) => {
  const query: EventQuery = { startMs: Date.UTC(2024, 0, 1), endMs: Date.UTC(2025, 0, 1), entities: { deviceIds: new Set(['d"1']), spaceIds: new Set() } }
  const statement = buildInfluxQLEventQuery('event', query)
  const received: string[] = []
  const hanging: ServerResponse[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => { body += chunk })
    request.on('end', () => {
      const q = new URLSearchParams(body).get('q') ?? ''
      received.push(q)
      if (q === 'SHOW QUERIES') {
        const reprinted = (text: string) => text.replaceAll('"message_id"', 'message_id').replaceAll('"event"', 'event').replaceAll('"device_id"', 'device_id')
        const sent = received.find((text) => text.startsWith('SELECT'))!
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          results: [{ statement_id: 0, series: [{ columns: ['qid', 'query', 'database', 'duration', 'status'], values: [[3, 'SHOW QUERIES', '', '1µs', 'running'], [7, reprinted(sent), 'events', '2s', 'running'], [8, reprinted(ownStatements(statement)), 'events', '1s', 'running'], [9, reprinted(sent), 'other', '2s', 'running']] }] }]
        }))
      } else if (q.startsWith('KILL QUERY')) {
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[{"statement_id":0}]}')
      } else {
        hanging.push(response)
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { for (const response of hanging) response.destroy(); server.close() })
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const backend = new InfluxQLBackend({ dialect: 'influxql', url, database: 'events', measurement: 'event', timeoutMs: 200, maxScans: 1, token: undefined, username: undefined, password: undefined })
  t.teardown(() => backend.close())
  await t.rejects((async () => { for await (const batch of backend.queryEvents(query)) t.fail(`no batch expected, got ${batch.length}`) })(), { name: 'StoreUnavailableError' })
  for (let i = 0; i < 50 && !received.some((q) => q.startsWith('KILL QUERY')); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(received.filter((q) => q.startsWith('KILL QUERY')), ['KILL QUERY 7'], 'its own query, on its own database, and no other')
  t.match(received[0], /^SELECT .* WHERE time > '1677-12-\d\dT[\d:.]{18}Z' AND time >= '2024-01-01T00:00:00.000Z'/, 'sent with a condition of its own, true of every event')
})

t.test('the same query sent twice is two texts: its own condition, an instant of December 1677, is another each time', async (t) => {
  const statement = buildInfluxQLEventQuery('event', { startMs: Date.UTC(2024, 0, 1), endMs: Date.UTC(2025, 0, 1), entities: undefined })
  const first = ownStatements(statement)
  const second = ownStatements(statement)
  t.not(first, second)
  t.notOk(sameStatement(first, second))
  for (const text of [first, second]) {
    const instant = /time > '([^']+)'/.exec(text)![1]!
    t.ok(Date.parse(instant) >= Date.UTC(1677, 11, 1) && Date.parse(instant) < Date.UTC(1678, 0, 1), `${instant}: before any event the provider stores (1678 on)`)
  }
  t.equal(ownStatements('SELECT a FROM b WHERE x = 1; SELECT c FROM d WHERE y = 2').split("WHERE time > '").length, 3, 'every statement of a request')
})

t.test('a running query is recognised as InfluxDB prints it again', async (t) => {
  t.ok(sameStatement('SELECT message_id FROM event WHERE time >= \'2024-01-01T00:00:00.000Z\'', 'SELECT "message_id" FROM "event" WHERE time >= \'2024-01-01T00:00:00.000Z\''))
  t.notOk(sameStatement('SELECT message_id FROM event WHERE device_id = \'a\'', 'SELECT "message_id" FROM "event" WHERE "device_id" = \'b\''))
})

t.test('its own condition goes after each WHERE keyword only: never into a quoted value that holds " WHERE "', async (t) => {
  const query: EventQuery = { startMs: Date.UTC(2024, 0, 1), endMs: Date.UTC(2025, 0, 1), entities: { deviceIds: new Set(['d WHERE 1']), spaceIds: new Set() }, messageCodes: new Set(['DOOR WHERE OPEN', "it's \\ WHERE "]) }
  for (const measurement of ['event', 'ev WHERE x']) {
    const statement = buildInfluxQLEventQuery(measurement, query)
    const own = ownStatements(statement)
    const instant = /WHERE time > '([^']+)' AND /.exec(own)![1]!
    t.equal(own, statement.replace(' WHERE time >=', ` WHERE time > '${instant}' AND time >=`), `only the keyword's (${measurement})`)
  }
})
