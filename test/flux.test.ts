import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { StoreUnavailableError, type EventQuery } from '../src/store/event-store.js'
import { toLineProtocol } from '../src/store/influx/event-point.js'
import { FluxBackend } from '../src/store/influx/flux-backend.js'
import { buildFluxEventQuery, buildFluxIndexQuery, buildFluxPointsQuery } from '../src/store/influx/flux-query.js'
import { idHashesOf, idHashOf, toIndexLine } from '../src/store/influx/message-id-index.js'
import type { FluxSettings } from '../src/store/influx/influx-settings.js'
import { MAX_PUSHED_ENTITIES } from '../src/store/influx/pushed-entities.js'
import { EVENT_TIME_MAX_MS, EVENT_TIME_MIN_MS } from '../src/time/rfc3339.js'

// No InfluxDB 2.x can run on this machine: the builders are checked against exact Flux text, and
// the backend talks to a stand-in HTTP server that answers as InfluxDB 2.7 does, from
// annotated CSV written by hand after the spec.

const T0 = Date.UTC(2024, 2, 1)
const DAY = 86_400_000

const HEAD = [
  'from(bucket: "events")',
  '  |> range(start: time(v: "2024-03-01T00:00:00.000Z"), stop: time(v: "2024-03-02T00:00:00.000Z"))',
  '  |> filter(fn: (r) => r._measurement == "event" and r._field == "message_id")'
]
const TAIL = [
  '  |> group()',
  '  |> keep(columns: ["_time", "_value", "device_id", "space_id", "message_code", "message_category"])',
  '  |> sort(columns: ["_time"])'
]

function eventQuery (parts: Partial<EventQuery>): EventQuery {
  return { startMs: T0, endMs: T0 + DAY, entities: undefined, ...parts }
}

function entities (deviceIds: string[], spaceIds: string[]) {
  return { deviceIds: new Set(deviceIds), spaceIds: new Set(spaceIds) }
}

t.test('the event query: every filter pushed down, one table in time order', async (t) => {
  const cases: Array<{ name: string, query: EventQuery, filter?: string }> = [
    { name: 'window only', query: eventQuery({}) },
    {
      name: 'devices',
      query: eventQuery({ entities: entities(['d1', 'd2'], []) }),
      filter: '(r.device_id == "d1" or r.device_id == "d2")'
    },
    {
      name: 'spaces',
      query: eventQuery({ entities: entities([], ['s1']) }),
      filter: '(r.space_id == "s1")'
    },
    {
      name: 'devices and spaces',
      query: eventQuery({ entities: entities(['d1'], ['s1', 's2']) }),
      filter: '(r.device_id == "d1" or r.space_id == "s1" or r.space_id == "s2")'
    },
    {
      name: 'message_ids, compared with the field',
      query: eventQuery({ messageIds: new Set(['m1', 'm2']) }),
      filter: '(r._value == "m1" or r._value == "m2")'
    },
    {
      name: 'category',
      query: eventQuery({ category: 'alert' }),
      filter: 'r.message_category == "alert"'
    },
    {
      name: 'codes',
      query: eventQuery({ messageCodes: new Set(['E1', 'E2']) }),
      filter: '(r.message_code == "E1" or r.message_code == "E2")'
    },
    {
      name: 'entities and an exclusive filter',
      query: eventQuery({ entities: entities(['d1'], []), messageCodes: new Set(['E1']) }),
      filter: '(r.device_id == "d1") and (r.message_code == "E1")'
    },
    {
      name: 'too many entities: the window alone, entities checked as rows arrive',
      query: eventQuery({ entities: entities(Array.from({ length: MAX_PUSHED_ENTITIES }, (_, i) => `d${i}`), ['s1']) })
    },
    {
      name: 'too many entities, with a category still pushed down',
      query: eventQuery({ entities: entities(Array.from({ length: MAX_PUSHED_ENTITIES + 1 }, (_, i) => `d${i}`), []), category: 'notification' }),
      filter: 'r.message_category == "notification"'
    }
  ]
  for (const { name, query, filter } of cases) {
    const expected = [...HEAD, ...(filter === undefined ? [] : [`  |> filter(fn: (r) => ${filter})`]), ...TAIL].join('\n')
    t.equal(buildFluxEventQuery('events', 'event', query), expected, name)
  }
  const limit = eventQuery({ entities: entities(Array.from({ length: MAX_PUSHED_ENTITIES - 1 }, (_, i) => `d${i}`), ['s1']) })
  t.match(buildFluxEventQuery('events', 'event', limit), `r.device_id == "d${MAX_PUSHED_ENTITIES - 2}" or r.space_id == "s1")`, 'exactly the limit is still pushed down')
})

t.test('hostile IDs go through the client\'s escaping and cannot change the query', async (t) => {
  const hostile: Array<[id: string, literal: string]> = [
    ['a"b', '"a\\"b"'],
    ['a\\b', '"a\\\\b"'],
    // eslint-disable-next-line no-template-curly-in-string -- a Flux interpolation, on purpose
    ['${x}', '"\\${x}"'],
    ['$x', '"$x"'],
    ["it's", '"it\'s"'],
    ['ünï 😀', '"ünï 😀"'],
    ['.*', '".*"'],
    ['a" or r.space_id != "', '"a\\" or r.space_id != \\""'],
    ['") |> drop(columns: ["_value"]) //', '"\\") |> drop(columns: [\\"_value\\"]) //"']
  ]
  for (const [id, literal] of hostile) {
    const flux = buildFluxEventQuery('events', 'event', eventQuery({
      entities: entities([id], [id]),
      messageIds: new Set([id]),
      messageCodes: new Set([id])
    }))!
    t.match(flux, `|> filter(fn: (r) => (r.device_id == ${literal} or r.space_id == ${literal}) and (r._value == ${literal}) and (r.message_code == ${literal}))\n`, JSON.stringify(id))
  }

  // Tags are stored with a space after a final backslash; message_id is a field, stored as it is.
  const flux = buildFluxEventQuery('events', 'event', eventQuery({
    entities: entities(['dev\\'], ['sp\\']),
    messageIds: new Set(['msg\\']),
    messageCodes: new Set(['code\\'])
  }))!
  t.match(flux, '(r.device_id == "dev\\\\ " or r.space_id == "sp\\\\ ") and (r._value == "msg\\\\") and (r.message_code == "code\\\\ ")')

  // eslint-disable-next-line no-template-curly-in-string -- a Flux interpolation, on purpose
  const odd = buildFluxEventQuery('my "bucket" ${b}', 'ev\\"t', eventQuery({}))!
  // eslint-disable-next-line no-template-curly-in-string -- the same, escaped
  t.match(odd, 'from(bucket: "my \\"bucket\\" \\${b}")\n')
  t.match(odd, 'r._measurement == "ev\\\\\\"t" and r._field == "message_id"')
})

t.test('the window is clamped as in InfluxQL, and an empty one is not queried', async (t) => {
  const wide = buildFluxEventQuery('events', 'event', eventQuery({ startMs: -8.64e15, endMs: 8.64e15 }))!
  t.match(wide, 'range(start: time(v: "1678-01-01T00:00:00.000Z"), stop: time(v: "2262-01-01T00:00:00.000Z"))')
  t.equal(buildFluxEventQuery('events', 'event', eventQuery({ startMs: T0, endMs: T0 })), undefined, 'Flux refuses an empty range')
  t.equal(buildFluxEventQuery('events', 'event', eventQuery({ startMs: Date.UTC(2300, 0, 1), endMs: Date.UTC(2301, 0, 1) })), undefined, 'empty once clamped')
  t.equal(buildFluxPointsQuery('events', 'event', T0 + 5, T0 + 5), undefined)
  t.equal(buildFluxPointsQuery('events', 'event', T0, T0 + 1), [
    'from(bucket: "events")',
    '  |> range(start: time(v: "2024-03-01T00:00:00.000Z"), stop: time(v: "2024-03-01T00:00:00.001Z"))',
    '  |> filter(fn: (r) => r._measurement == "event" and r._field == "message_id")',
    '  |> keep(columns: ["_time", "_value", "device_id", "space_id", "message_code", "message_category"])'
  ].join('\n'), 'points for the writer: no group or sort, the writer does not need them in order')
})

// --- The stand-in InfluxDB 2.x -------------------------------------------------------------

interface Received {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

type Answer = (request: Received, response: ServerResponse) => void

interface StandIn {
  url: string
  received: Received[]
}

/**
 * An HTTP server on 127.0.0.1 that records each request and answers it as `answer` says; /ping
 * gets 204, as from InfluxDB 2.x, unless `answerPing` is false.
 */
async function standInInflux2 (t: Test, answer: Answer, { answerPing = true } = {}): Promise<StandIn> {
  const received: Received[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      let body = Buffer.concat(chunks)
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
      const record = { method: request.method!, url: request.url!, headers: request.headers, body: body.toString('utf8') }
      received.push(record)
      if (request.url === '/ping' && answerPing) {
        response.writeHead(204, { 'x-influxdb-version': 'v2.7.11' }).end()
        return
      }
      answer(record, response)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
}

function answerCsv (csv: string): Answer {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(csv)
  }
}

function answerJsonError (status: number, code: string, message: string): Answer {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ code, message }))
  }
}

const neverAnswer: Answer = () => {}

/** A port nothing listens on. */
async function closedPortUrl (): Promise<string> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return `http://127.0.0.1:${port}`
}

function settings (url: string, timeoutMs = 2000): FluxSettings {
  return { dialect: 'flux', url, token: 'secret-token', org: 'acme org', bucket: 'events', measurement: 'event', timeoutMs, maxScans: 1 }
}

async function collect<T> (batches: AsyncIterable<T[]>): Promise<T[][]> {
  const all: T[][] = []
  for await (const batch of batches) all.push(batch)
  return all
}

async function unavailableError (t: Test, promise: Promise<unknown>, message: RegExp): Promise<StoreUnavailableError | undefined> {
  try {
    await promise
  } catch (error) {
    t.type(error, StoreUnavailableError)
    t.match((error as Error).message, message)
    return error as StoreUnavailableError
  }
  t.fail('expected a StoreUnavailableError')
  return undefined
}

/** Annotated CSV lines as InfluxDB sends them: CRLF, a blank line after each table block. */
function csv (...lines: string[]): string {
  return lines.map((line) => line + '\r\n').join('')
}

// The event query's answer as InfluxDB 2.7 sends it after group(): one table, no group key,
// the result name in #default, nulls empty. Every column of the points is there, as without keep().
const GROUPED_ANSWER = csv(
  '#datatype,string,long,dateTime:RFC3339,dateTime:RFC3339,dateTime:RFC3339,string,string,string,string,string,string,string',
  '#group,false,false,false,false,false,false,false,false,false,false,false,false',
  '#default,_result,,,,,,,,,,,',
  ',result,table,_start,_stop,_time,_value,_field,_measurement,device_id,message_category,message_code,space_id',
  ',,0,2024-03-01T00:00:00Z,2024-03-02T00:00:00Z,2024-03-01T08:00:00Z,m-1,message_id,event,d1,alert,E101,s1',
  ',,0,2024-03-01T00:00:00Z,2024-03-02T00:00:00Z,2024-03-01T08:00:00.005000017Z,m-2,message_id,event,,notification,N7,s1',
  ',,0,2024-03-01T00:00:00Z,2024-03-02T00:00:00Z,2024-03-01T09:30:15.123456789Z,"m,""3""",message_id,event,d2,alert,"E ""x"", y",s2',
  ',,0,2024-03-01T00:00:00Z,2024-03-02T00:00:00Z,2024-03-01T10:00:00.1Z,ünï-😀,message_id,event,d\\ ,alert,C\\ ,s\\ ',
  ''
)

// Tables per series, as a query without group() answers: a new block of annotations wherever the
// columns change, here for a space event's series, which has no device_id column at all.
const SERIES_ANSWER = csv(
  '#datatype,string,long,dateTime:RFC3339,string,string,string,string,string',
  '#group,false,false,false,false,true,true,true,true',
  '#default,_result,,,,,,,',
  ',result,table,_time,_value,device_id,message_category,message_code,space_id',
  ',,0,2024-03-01T08:00:00.000000001Z,m-1,d1,alert,E101,s1',
  ',,0,2024-03-01T08:00:00.000999999Z,m-5,d1,alert,E101,s1',
  ',,1,2024-03-01T11:00:00.25Z,m-6,d2,notification,N7,s2',
  '',
  '#datatype,string,long,dateTime:RFC3339,string,string,string,string',
  '#group,false,false,false,false,true,true,true',
  '#default,_result,,,,,,',
  ',result,table,_time,_value,message_category,message_code,space_id',
  ',,2,2024-03-01T09:00:00.5Z,m-9,notification,N7,s1',
  ''
)

t.test('the event query is sent to /api/v2/query with the org and the token', async (t) => {
  const influx = await standInInflux2(t, answerCsv(GROUPED_ANSWER))
  const backend = new FluxBackend(settings(influx.url))
  const query = eventQuery({ entities: entities(['d1'], ['s1']), category: 'alert' })
  await collect(backend.queryEvents(query))
  t.equal(influx.received.length, 1)
  const [request] = influx.received
  t.equal(request!.method, 'POST')
  t.equal(request!.url, '/api/v2/query?org=acme%20org')
  t.equal(request!.headers.authorization, 'Token secret-token')
  const body = JSON.parse(request!.body)
  t.equal(body.query, buildFluxEventQuery('events', 'event', query))
  t.equal(body.type, 'flux')
  t.same(body.dialect.annotations, ['datatype', 'group', 'default'])
})

t.test('rows of the grouped answer become timed messages: ms from _time, tags decoded, message_id from _value', async (t) => {
  const influx = await standInInflux2(t, answerCsv(GROUPED_ANSWER))
  const backend = new FluxBackend(settings(influx.url))
  const batches = await collect(backend.queryEvents(eventQuery({})))
  t.same(batches, [[
    {
      epochMs: Date.UTC(2024, 2, 1, 8),
      message: { message_id: 'm-1', message_code: 'E101', message_category: 'alert', date_time: '2024-03-01T08:00:00.000Z', device_id: 'd1', space_id: 's1' }
    },
    {
      epochMs: Date.UTC(2024, 2, 1, 8, 0, 0, 5),
      message: { message_id: 'm-2', message_code: 'N7', message_category: 'notification', date_time: '2024-03-01T08:00:00.005Z', space_id: 's1' }
    },
    {
      epochMs: Date.UTC(2024, 2, 1, 9, 30, 15, 123),
      message: { message_id: 'm,"3"', message_code: 'E "x", y', message_category: 'alert', date_time: '2024-03-01T09:30:15.123Z', device_id: 'd2', space_id: 's2' }
    },
    {
      epochMs: Date.UTC(2024, 2, 1, 10, 0, 0, 100),
      message: { message_id: 'ünï-😀', message_code: 'C\\', message_category: 'alert', date_time: '2024-03-01T10:00:00.100Z', device_id: 'd\\', space_id: 's\\' }
    }
  ]])
  t.notOk('device_id' in batches[0]![1]!.message, 'a space event has no device_id')
})

t.test('several tables with different columns are read by label', async (t) => {
  const influx = await standInInflux2(t, answerCsv(SERIES_ANSWER))
  const backend = new FluxBackend(settings(influx.url))
  const [messages] = await collect(backend.queryEvents(eventQuery({})))
  t.same(messages!.map(({ message, epochMs }) => [message.message_id, epochMs, message.device_id, message.space_id]), [
    ['m-1', Date.UTC(2024, 2, 1, 8), 'd1', 's1'],
    ['m-5', Date.UTC(2024, 2, 1, 8), 'd1', 's1'],
    ['m-6', Date.UTC(2024, 2, 1, 11, 0, 0, 250), 'd2', 's2'],
    ['m-9', Date.UTC(2024, 2, 1, 9, 0, 0, 500), undefined, 's1']
  ])
})

t.test('points for the writer carry their exact slot and tags as stored', async (t) => {
  const influx = await standInInflux2(t, answerCsv(SERIES_ANSWER))
  const backend = new FluxBackend(settings(influx.url))
  const batches = await collect(backend.pointsBetween(T0, T0 + DAY))
  t.equal(JSON.parse(influx.received[0]!.body).query, buildFluxPointsQuery('events', 'event', T0, T0 + DAY))
  t.same(batches, [[
    { values: { message_id: 'm-1', message_code: 'E101', message_category: 'alert', device_id: 'd1', space_id: 's1' }, epochMs: Date.UTC(2024, 2, 1, 8), slot: 1 },
    { values: { message_id: 'm-5', message_code: 'E101', message_category: 'alert', device_id: 'd1', space_id: 's1' }, epochMs: Date.UTC(2024, 2, 1, 8), slot: 999_999 },
    { values: { message_id: 'm-6', message_code: 'N7', message_category: 'notification', device_id: 'd2', space_id: 's2' }, epochMs: Date.UTC(2024, 2, 1, 11, 0, 0, 250), slot: 0 },
    { values: { message_id: 'm-9', message_code: 'N7', message_category: 'notification', device_id: undefined, space_id: 's1' }, epochMs: Date.UTC(2024, 2, 1, 9, 0, 0, 500), slot: 0 }
  ]])
})

t.test('a time before 1970 keeps its millisecond and slot (InfluxDB writes the nanoseconds out in full)', async (t) => {
  const influx = await standInInflux2(t, answerCsv(csv(
    '#datatype,string,long,dateTime:RFC3339,string,string,string,string,string',
    '#group,false,false,false,false,true,true,true,true',
    '#default,_result,,,,,,,',
    ',result,table,_time,_value,device_id,message_category,message_code,space_id',
    ',,0,1969-12-31T23:59:59.9980005Z,m-old,d1,alert,E1,s1',
    ''
  )))
  const backend = new FluxBackend(settings(influx.url))
  const [point] = (await collect(backend.pointsBetween(-DAY, DAY))).flat()
  t.same([point?.epochMs, point?.slot], [-2, 500], 'stored as -2 ms + slot 500, i.e. -1 999 500 ns')
  const [event] = (await collect(backend.queryEvents(eventQuery({ startMs: -DAY, endMs: DAY })))).flat()
  t.same([event?.epochMs, event?.message.date_time], [-2, '1969-12-31T23:59:59.998Z'])
})

t.test('an empty answer, and an empty window, yield nothing; the empty window asks nothing', async (t) => {
  const influx = await standInInflux2(t, answerCsv('\r\n'))
  const backend = new FluxBackend(settings(influx.url))
  t.same(await collect(backend.queryEvents(eventQuery({}))), [])
  t.same(await collect(backend.queryEvents(eventQuery({ startMs: T0, endMs: T0 }))), [])
  t.same(await collect(backend.pointsBetween(T0, T0)), [])
  t.equal(influx.received.length, 1)
})

const ROW_HEAD = csv(
  '#datatype,string,long,dateTime:RFC3339,string,string,string,string,string',
  '#group,false,false,false,false,false,false,false,false',
  '#default,_result,,,,,,,',
  ',result,table,_time,_value,device_id,message_category,message_code,space_id'
)

function rows (from: number, count: number): string {
  let text = ''
  for (let i = from; i < from + count; i++) text += `,,0,${new Date(T0 + i).toISOString()},m-${i},d1,alert,E1,s1\r\n`
  return text
}

t.test('rows stream in batches of 1000, in the order they come', async (t) => {
  const influx = await standInInflux2(t, answerCsv(ROW_HEAD + rows(0, 2500) + '\r\n'))
  const backend = new FluxBackend(settings(influx.url))
  const batches = await collect(backend.queryEvents(eventQuery({})))
  t.same(batches.map((batch) => batch.length), [1000, 1000, 500])
  t.same(batches.flat().map(({ epochMs }) => epochMs - T0), Array.from({ length: 2500 }, (_, i) => i))
})

t.test('a reader that stops early closes the connection, so InfluxDB cancels the query', async (t) => {
  let closed: Promise<unknown> | undefined
  const influx = await standInInflux2(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' })
    response.write(ROW_HEAD + rows(0, 1500))
    closed = once(response, 'close')
  })
  const batches = new FluxBackend(settings(influx.url)).queryEvents(eventQuery({}))
  const first = await batches.next()
  t.equal(first.value?.length, 1000)
  await batches.return(undefined)
  const started = Date.now()
  await closed
  t.ok(Date.now() - started < 1000, 'the stand-in saw the connection close at once')
})

t.test('a reader holding a batch longer than the timeout is not InfluxDB being slow', async (t) => {
  const influx = await standInInflux2(t, answerCsv(ROW_HEAD + rows(0, 2500) + '\r\n'))
  const backend = new FluxBackend(settings(influx.url, 150))
  let count = 0
  for await (const batch of backend.queryEvents(eventQuery({}))) {
    count += batch.length
    await new Promise((resolve) => setTimeout(resolve, 400))
  }
  t.equal(count, 2500)
})

t.test('InfluxDB that never answers: StoreUnavailableError after about the timeout', async (t) => {
  const influx = await standInInflux2(t, neverAnswer)
  const backend = new FluxBackend(settings(influx.url, 300))
  const started = Date.now()
  const error = await unavailableError(t, collect(backend.queryEvents(eventQuery({}))), /^InfluxDB did not answer within 300 ms$/)
  const elapsed = Date.now() - started
  t.ok(elapsed >= 250 && elapsed < 1500, `failed after ${elapsed} ms`)
  t.ok(error?.cause, 'the cause is attached')
})

t.test('InfluxDB that stops answering mid-stream: StoreUnavailableError', async (t) => {
  const influx = await standInInflux2(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' })
    response.write(ROW_HEAD + rows(0, 10))
  })
  const backend = new FluxBackend(settings(influx.url, 300))
  await unavailableError(t, collect(backend.queryEvents(eventQuery({}))), /^InfluxDB stopped answering for 300 ms$/)
})

t.test('InfluxDB that cannot be reached: StoreUnavailableError', async (t) => {
  const url = await closedPortUrl()
  const backend = new FluxBackend(settings(url))
  const error = await unavailableError(t, collect(backend.queryEvents(eventQuery({}))), /^InfluxDB cannot be reached at http:\/\/127\.0\.0\.1:\d+$/)
  t.match((error?.cause as NodeJS.ErrnoException | undefined)?.code, 'ECONNREFUSED')
  await unavailableError(t, collect(backend.pointsBetween(T0, T0 + DAY)), /cannot be reached/)
  await unavailableError(t, backend.ping(), /cannot be reached/)
})

t.test('InfluxDB answering 500, or refusing the query: StoreUnavailableError with its reason', async (t) => {
  const failing = await standInInflux2(t, answerJsonError(500, 'internal error', 'unexpected error writing result to client'))
  await unavailableError(t, collect(new FluxBackend(settings(failing.url)).queryEvents(eventQuery({}))),
    /^InfluxDB answered 500 to a query: unexpected error writing result to client$/)
  const noBucket = await standInInflux2(t, answerJsonError(404, 'not found', 'failed to initialize execute state: could not find bucket "events"'))
  await unavailableError(t, collect(new FluxBackend(settings(noBucket.url)).queryEvents(eventQuery({}))),
    /^InfluxDB answered 404 to a query: failed to initialize execute state: could not find bucket "events"$/)
  const proxy = await standInInflux2(t, (_request, response) => { response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>') })
  await unavailableError(t, collect(new FluxBackend(settings(proxy.url)).queryEvents(eventQuery({}))), /^InfluxDB answered 502 to a query: <h1>Bad Gateway<\/h1>$/)
})

t.test('a failure after the answer has begun comes as an error table: StoreUnavailableError', async (t) => {
  const influx = await standInInflux2(t, answerCsv(ROW_HEAD + rows(0, 3) + csv(
    '',
    '#datatype,string,string',
    '#group,true,true',
    '#default,,',
    ',error,reference',
    ',"panic: query exceeded its memory limit, ""allocated"": 1024",897',
    ''
  )))
  await unavailableError(t, collect(new FluxBackend(settings(influx.url)).queryEvents(eventQuery({}))),
    /^InfluxDB failed a query: panic: query exceeded its memory limit, "allocated": 1024$/)
})

t.test('ping: 204 from /ping', async (t) => {
  const influx = await standInInflux2(t, neverAnswer)
  await new FluxBackend(settings(influx.url)).ping()
  t.equal(influx.received[0]!.url, '/ping')
  const silent = await standInInflux2(t, neverAnswer, { answerPing: false })
  await unavailableError(t, new FluxBackend(settings(silent.url, 200)).ping(), /^InfluxDB did not answer within 200 ms$/)
  const failing = await standInInflux2(t, answerJsonError(503, 'unavailable', 'starting'), { answerPing: false })
  await unavailableError(t, new FluxBackend(settings(failing.url)).ping(), /^InfluxDB ping answered 503$/)
})

const LINES = [
  toLineProtocol('event', { message_id: 'm 1', message_code: 'E,1', message_category: 'alert', date_time: '', device_id: 'd=1', space_id: 's\\' }, T0 + 5, 17),
  toLineProtocol('event', { message_id: 'm"2\\', message_code: 'N7', message_category: 'notification', date_time: '', space_id: 'ünï' }, T0 + 6, 0)
]

t.test('writes: line protocol to /api/v2/write with org, bucket, ns precision and the token', async (t) => {
  const influx = await standInInflux2(t, (_request, response) => { response.writeHead(204).end() })
  const backend = new FluxBackend({ ...settings(influx.url), bucket: 'events/1' })
  await backend.write(LINES)
  t.equal(influx.received.length, 1)
  const [request] = influx.received
  t.equal(request!.method, 'POST')
  t.equal(request!.url, '/api/v2/write?org=acme%20org&bucket=events%2F1&precision=ns')
  t.equal(request!.headers.authorization, 'Token secret-token')
  t.match(request!.headers['content-type'], /^text\/plain/)
  t.equal(request!.body, LINES.join('\n'))
  t.equal(request!.body, [
    'event,device_id=d\\=1,message_category=alert,message_code=E\\,1,space_id=s\\\\  message_id="m 1" 1709251200005000017',
    'event,message_category=notification,message_code=N7,space_id=ünï message_id="m\\"2\\\\" 1709251200006000000'
  ].join('\n'), 'as the line protocol spells it, nanoseconds with the slot')

  // A large write goes compressed, still in one request.
  const many = Array.from({ length: 200 }, (_, i) => LINES[0]!.replace('1709251200005000017', String(1709251200005000017n + BigInt(i))))
  await backend.write(many)
  t.equal(influx.received.length, 2)
  t.equal(influx.received[1]!.headers['content-encoding'], 'gzip')
  t.equal(influx.received[1]!.body, many.join('\n'))

  await backend.write([])
  t.equal(influx.received.length, 2, 'nothing to write, nothing sent')
})

t.test('a refused write throws InfluxDB\'s reason; 5xx, silence and no connection are StoreUnavailableError; no retries', async (t) => {
  const refusing = await standInInflux2(t, answerJsonError(400, 'invalid', 'unable to parse \'event,x\': missing fields'))
  const backend = new FluxBackend(settings(refusing.url))
  try {
    await backend.write(LINES)
    t.fail('the write should fail')
  } catch (error) {
    t.notOk(error instanceof StoreUnavailableError, 'a refusal is not unavailability')
    t.equal((error as Error).message, 'InfluxDB refused a write (400): unable to parse \'event,x\': missing fields')
  }

  const failing = await standInInflux2(t, answerJsonError(503, 'unavailable', 'the write queue is full'))
  await unavailableError(t, new FluxBackend(settings(failing.url)).write(LINES), /^InfluxDB refused a write \(503\): the write queue is full$/)
  t.equal(failing.received.length, 1, 'not retried')

  const silent = await standInInflux2(t, neverAnswer)
  const started = Date.now()
  await unavailableError(t, new FluxBackend(settings(silent.url, 300)).write(LINES), /^InfluxDB did not answer a write within 300 ms$/)
  t.ok(Date.now() - started < 1500)

  await unavailableError(t, new FluxBackend(settings(await closedPortUrl())).write(LINES), /^InfluxDB cannot be reached at /)
})

t.test('prepareForWrites checks that the bucket is listed, and lets the writes speak when it cannot tell', async (t) => {
  const bucketList = (names: string[]) => answerCsv(csv(
    '#datatype,string,long,string',
    '#group,false,false,false',
    '#default,_result,,',
    ',result,table,name',
    ...names.map((name) => `,,0,${name}`),
    ''
  ))
  const listed = await standInInflux2(t, bucketList(['events']))
  await new FluxBackend(settings(listed.url)).prepareForWrites()
  t.match(JSON.parse(listed.received[0]!.body).query, 'buckets()\n  |> filter(fn: (r) => r.name == "events")')

  const missing = await standInInflux2(t, bucketList([]))
  await t.rejects(new FluxBackend(settings(missing.url)).prepareForWrites(), { message: 'InfluxDB has no bucket "events" in org "acme org" that the token can read' })

  const forbidden = await standInInflux2(t, answerJsonError(401, 'unauthorized', 'unauthorized access'))
  await new FluxBackend(settings(forbidden.url)).prepareForWrites()
  t.pass('no verdict when the list cannot be read')
})

t.test('the message_id index: the query reads only the IDs\' hash series, and rows become messages from their JSON', async (t) => {
  const hashes = idHashesOf(['m-1', 'm-2'])
  t.equal(buildFluxIndexQuery('events', 'event', hashes, T0, T0 + DAY), [
    'from(bucket: "events")',
    '  |> range(start: time(v: "2024-03-01T00:00:00.000Z"), stop: time(v: "2024-03-02T00:00:00.000Z"))',
    '  |> filter(fn: (r) => r._measurement == "event_by_id" and r._field == "message")',
    `  |> filter(fn: (r) => (r.id_hash == "${hashes[0]}" or r.id_hash == "${hashes[1]}"))`,
    '  |> group()',
    '  |> keep(columns: ["_time", "_value"])',
    '  |> sort(columns: ["_time"])'
  ].join('\n'))
  t.equal(buildFluxIndexQuery('events', 'event', [], T0, T0 + DAY), undefined, 'no hash, no query')

  const json = (message: Record<string, string>) => '"' + JSON.stringify(message).replaceAll('"', '""') + '"'
  const influx = await standInInflux2(t, answerCsv(csv(
    '#datatype,string,long,dateTime:RFC3339Nano,string',
    '#group,false,false,false,false',
    '#default,_result,,,',
    ',result,table,_time,_value',
    `,,0,2024-03-01T08:00:00.000000017Z,${json({ space_id: 's1', message_id: 'm-1', message_code: 'E1', message_category: 'alert', date_time: '2024-03-01T08:00:00.000Z', device_id: 'd1' })}`,
    ',,0,2024-03-01T09:00:00Z,not json',
    `,,0,2024-03-01T10:00:00Z,${json({ message_id: 'm-2', message_code: 'N7', message_category: 'notification', date_time: '2024-03-01T10:00:00.000Z', space_id: 's2' })}`,
    ''
  )))
  const [rows] = await collect(new FluxBackend(settings(influx.url)).indexedEvents(hashes, T0, T0 + DAY))
  t.equal(JSON.parse(influx.received[0]!.body).query, buildFluxIndexQuery('events', 'event', hashes, T0, T0 + DAY))
  t.same(rows, [
    { message: { message_id: 'm-1', message_code: 'E1', message_category: 'alert', date_time: '2024-03-01T08:00:00.000Z', device_id: 'd1', space_id: 's1' }, epochMs: Date.UTC(2024, 2, 1, 8) },
    { message: { message_id: 'm-2', message_code: 'N7', message_category: 'notification', date_time: '2024-03-01T10:00:00.000Z', space_id: 's2' }, epochMs: Date.UTC(2024, 2, 1, 10) }
  ], 'in wire field order; a value that is not an event is left out')
  t.same(Object.keys(rows![0]!.message), ['message_id', 'message_code', 'message_category', 'date_time', 'device_id', 'space_id'])

  // The writer's lookup: the same query across all time, each point with its slot.
  const points = (await collect(new FluxBackend(settings(influx.url)).indexPoints(hashes))).flat()
  t.equal(JSON.parse(influx.received[1]!.body).query, buildFluxIndexQuery('events', 'event', hashes, EVENT_TIME_MIN_MS, EVENT_TIME_MAX_MS))
  t.same(points.map(({ message, epochMs, slot }) => [message.message_id, epochMs, slot]), [['m-1', Date.UTC(2024, 2, 1, 8), 17], ['m-2', Date.UTC(2024, 2, 1, 10), 0]], 'with the slot below the millisecond')
})

t.test('an index point: tag id_hash, field message with the wire JSON, the event point\'s own time', async (t) => {
  const message = { message_id: 'm "1"', message_code: 'E,1', message_category: 'alert' as const, date_time: '2024-03-01T00:00:00.005Z', device_id: 'd=1', space_id: 's\\' }
  t.equal(toIndexLine('event', message, T0 + 5, 17),
    `event_by_id,id_hash=${idHashOf('m "1"')} message="{\\"message_id\\":\\"m \\\\\\"1\\\\\\"\\",\\"message_code\\":\\"E,1\\",\\"message_category\\":\\"alert\\",\\"date_time\\":\\"2024-03-01T00:00:00.005Z\\",\\"device_id\\":\\"d=1\\",\\"space_id\\":\\"s\\\\\\\\\\"}" 1709251200005000017`)
  t.match(idHashOf('anything'), /^[0-9a-f]{4}$/)
  t.equal(idHashesOf(['a', 'a', 'b']).length, idHashOf('a') === idHashOf('b') ? 1 : 2, 'distinct hashes')
})
