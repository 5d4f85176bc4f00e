import t from 'tap'
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { EventQuery } from '../src/store/event-store.js'
import { InfluxQLBackend, sameStatement } from '../src/store/influx/influxql-backend.js'
import { buildInfluxQLEventQuery } from '../src/store/influx/influxql-query.js'

// A stand-in InfluxDB 1.x: the events query never answers; SHOW QUERIES lists it, re-printed as
// InfluxDB 1.6 prints running queries (identifiers unquoted), beside another database's query.
t.test('a query the provider gives up on is killed in InfluxDB', async (t) => {
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
        const shown = statement.replaceAll('"message_id"', 'message_id').replaceAll('"event"', 'event').replaceAll('"device_id"', 'device_id')
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          results: [{ statement_id: 0, series: [{ columns: ['qid', 'query', 'database', 'duration', 'status'], values: [[3, 'SHOW QUERIES', '', '1µs', 'running'], [7, shown, 'events', '2s', 'running'], [8, shown, 'other', '2s', 'running']] }] }]
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
})

t.test('a running query is recognised as InfluxDB prints it again', async (t) => {
  t.ok(sameStatement('SELECT message_id FROM event WHERE time >= \'2024-01-01T00:00:00.000Z\'', 'SELECT "message_id" FROM "event" WHERE time >= \'2024-01-01T00:00:00.000Z\''))
  t.notOk(sameStatement('SELECT message_id FROM event WHERE device_id = \'a\'', 'SELECT "message_id" FROM "event" WHERE "device_id" = \'b\''))
})
