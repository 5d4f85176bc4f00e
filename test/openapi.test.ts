import t, { type Test } from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { ErrorCode, type ErrorCodeName } from '../schemas/error.js'
import { EventsQuerystring, EventStreamQuerystring } from '../schemas/events.js'
import { SpecificationsQuerystring } from '../schemas/specifications.js'
import { AUTH, build, INGEST_AUTH } from './helper.js'

interface Parameter { name: string, in: string, description?: string }
interface Response { description: string, content?: Record<string, { schema: Record<string, unknown> }>, headers?: Record<string, unknown> }
interface Operation { operationId?: string, summary?: string, description?: string, parameters?: Parameter[], responses: Record<string, Response>, requestBody?: { content: Record<string, unknown> }, security?: unknown[] }
interface Document {
  openapi: string
  info: { title: string, version: string, description: string }
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown>, securitySchemes: Record<string, unknown> }
  security: unknown[]
}

const OPERATIONS = [
  ['get', '/svc/v2/events'],
  ['get', '/svc/v2/event_specifications'],
  ['get', '/svc/v2/events/stream'],
  ['post', '/ingest/events'],
  ['get', '/health/live'],
  ['get', '/health/ready']
] as const

/** The error codes an error answer's description names (its first line: "... is one of: `a`, `b`"). */
function codesOf (response: Response): string[] {
  const list = (response.description.split('\n')[0] ?? '').split(' one of: ')[1] ?? ''
  return [...list.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!)
}

const isErrorAnswer = (status: string, response: Response) =>
  response.content?.['application/json']?.schema.$ref === '#/components/schemas/ErrorObject' || (status === '204' && response.headers?.['x-error-message'] !== undefined)

async function documentOf (t: Test, app: Awaited<ReturnType<typeof build>>, url = '/svc/v2/openapi.json'): Promise<Document> {
  const response = await app.inject({ url })
  t.equal(response.statusCode, 200, `${url}: 200 without a token`)
  t.match(response.headers['content-type'], /^application\/json/)
  return response.json()
}

t.test('the document: served without a token, a valid OpenAPI 3.1 document whose references resolve', async (t) => {
  const app = await build(t)
  const doc = await documentOf(t, app)
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.info.title, 'events-provider')
  t.match(doc.info.version, /^\d+\.\d+\.\d+/)

  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>)
  t.same(result.errors, undefined, 'no validation errors')
  t.equal(result.valid, true, 'valid against the OpenAPI 3.1 schema')
  t.equal(validator.version, '3.1')
  t.doesNotThrow(() => validator.resolveRefs(), 'every $ref resolves')

  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]!)
  t.ok(refs.length > 0)
  for (const ref of new Set(refs)) {
    t.match(ref, /^#\/components\/schemas\//, `${ref} is local`)
    t.ok(doc.components.schemas[ref.slice('#/components/schemas/'.length)], `${ref} is in the document`)
  }
  t.same(Object.keys(doc.components.schemas).sort(), ['ErrorObject', 'ItemError', 'Message'], 'the schemas with an $id are components')
  t.notMatch(JSON.stringify(doc), /"\$id"/, 'no $id left in the document')

  t.match(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: String }, 'a bearer scheme')
  t.same(doc.security, [{ bearerAuth: [] }], 'applied globally')
})

t.test('every route, parameter and answer is in it, with descriptions', async (t) => {
  const app = await build(t)
  const doc = await documentOf(t, app)
  t.same(Object.keys(doc.paths).sort(), [...new Set(OPERATIONS.map(([, path]) => path))].sort(), 'the interface and the probes; not /metrics, /docs or the document')
  for (const [method, path] of OPERATIONS) {
    const operation = doc.paths[path]?.[method]
    if (operation === undefined) {
      t.fail(`${method} ${path} is missing`)
      continue
    }
    t.ok(operation.operationId, `${method} ${path}: operationId`)
    t.ok(operation.summary, `${method} ${path}: summary`)
    t.ok(operation.description, `${method} ${path}: description`)
    for (const parameter of operation.parameters ?? []) {
      t.ok(parameter.description !== undefined && parameter.description.length > 10, `${method} ${path}: ${parameter.in} parameter ${parameter.name} has a description`)
    }
    for (const [status, response] of Object.entries(operation.responses)) {
      t.ok(response.description.length > 0 && response.description !== 'Default Response', `${method} ${path} ${status}: described`)
    }
    t.ok(operation.responses['200'], `${method} ${path}: its 200`)
  }

  const query = (path: string) => (doc.paths[path]!.get!.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name).sort()
  t.same(query('/svc/v2/events'), Object.keys(EventsQuerystring.properties).sort(), 'every parameter of the events')
  t.same(query('/svc/v2/event_specifications'), Object.keys(SpecificationsQuerystring.properties).sort(), 'every parameter of the specifications')
  t.same(query('/svc/v2/events/stream'), Object.keys(EventStreamQuerystring.properties).sort(), 'every parameter of the stream')
  t.ok(doc.paths['/svc/v2/events']!.get!.parameters!.find((parameter) => parameter.name === 'start_date' && (parameter as { required?: boolean }).required === true), 'start_date is required')
  t.ok(doc.paths['/svc/v2/events/stream']!.get!.parameters!.find((parameter) => parameter.in === 'header' && parameter.name === 'last-event-id'), 'the stream reads Last-Event-ID')
  t.notOk(JSON.stringify(doc.paths).includes('"name":"authorization"'), 'the token is the security scheme, not a parameter')

  const events = doc.paths['/svc/v2/events']!.get!.responses['200']!
  t.match(events.content?.['application/json']?.schema.properties, {
    data: { description: String, type: 'array', items: { $ref: '#/components/schemas/Message' } },
    errors: { description: String, type: 'array', items: { $ref: '#/components/schemas/ItemError' } }
  }, 'the events answer, from its TypeBox schema')
  t.same(Object.keys(doc.paths['/svc/v2/events/stream']!.get!.responses['200']!.content ?? {}), ['text/event-stream'], 'the stream answers text/event-stream')
  t.same(Object.keys(doc.paths['/ingest/events']!.post!.requestBody?.content ?? {}).sort(), ['application/json', 'application/x-ndjson'], 'the ingest body in both types')
  t.same(doc.paths['/health/live']!.get!.security, [], 'the probes need no token')
  t.equal(doc.paths['/svc/v2/events']!.get!.security, undefined, 'the interface needs the token')
})

t.test('each error answer names the codes of its status, with their meanings', async (t) => {
  const app = await build(t)
  const doc = await documentOf(t, app)
  const expected: Record<string, Record<string, ErrorCodeName[]>> = {
    'get /svc/v2/events': {
      400: ['invalid_parameter', 'duplicate_parameter', 'missing_parameter', 'invalid_parameter_combination'],
      401: ['unauthorized_request'],
      403: ['invalid_start_date', 'invalid_end_date', 'forbidden'],
      429: ['too_many_requests'],
      500: ['internal_error'],
      503: ['service_unavailable']
    },
    'get /svc/v2/event_specifications': {
      204: ['not_implemented'],
      400: ['invalid_parameter', 'duplicate_parameter'],
      401: ['unauthorized_request'],
      403: ['forbidden'],
      429: ['too_many_requests'],
      500: ['internal_error'],
      503: ['service_unavailable']
    },
    'get /svc/v2/events/stream': {
      400: ['invalid_parameter', 'duplicate_parameter', 'invalid_parameter_combination'],
      401: ['unauthorized_request'],
      403: ['invalid_start_date', 'forbidden'],
      429: ['too_many_requests'],
      500: ['internal_error'],
      503: ['service_unavailable']
    },
    'post /ingest/events': {
      400: ['invalid_body'],
      401: ['unauthorized_request'],
      403: ['forbidden'],
      408: ['request_timeout'],
      413: ['payload_too_large'],
      415: ['unsupported_media_type'],
      429: ['too_many_requests'],
      500: ['internal_error'],
      503: ['service_unavailable']
    }
  }
  for (const [method, path] of OPERATIONS) {
    const operation = doc.paths[path]![method]!
    const errors: Record<string, string[]> = {}
    for (const [status, response] of Object.entries(operation.responses)) {
      if (!isErrorAnswer(status, response)) continue
      const codes = codesOf(response)
      errors[status] = codes
      for (const code of codes) {
        t.equal(ErrorCode[code as ErrorCodeName], Number(status), `${method} ${path}: ${code} is a ${status}`)
        t.match(response.description, new RegExp(`^- \`${code}\`: .{10,}`, 'm'), `${method} ${path} ${status}: what ${code} means`)
      }
    }
    const key = `${method} ${path}`
    t.same(errors, expected[key] ?? {}, `${key}: its error answers and codes`)
  }
  for (const code of Object.keys(ErrorCode)) t.match(doc.info.description, `\`${code}\``, `the overview lists ${code}`)
})

t.test('the codes the routes answer with are the ones the document lists for them', async (t) => {
  const app = await build(t)
  const doc = await documentOf(t, app)
  const listed = (method: string, path: string, status: number) => codesOf(doc.paths[path]![method]!.responses[String(status)]!)
  const future = new Date(Date.now() + 86_400_000).toISOString()
  const requests = [
    ['get', '/svc/v2/events', { url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z' }],
    ['get', '/svc/v2/events', { url: '/svc/v2/events?end_date=2025-01-01T00:00:00Z', headers: AUTH }],
    ['get', '/svc/v2/events', { url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z&start_date=2025-01-02T00:00:00Z', headers: AUTH }],
    ['get', '/svc/v2/events', { url: `/svc/v2/events?start_date=${future}`, headers: AUTH }],
    ['get', '/svc/v2/events', { url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z', headers: INGEST_AUTH }],
    ['get', '/svc/v2/event_specifications', { url: '/svc/v2/event_specifications?nope=1', headers: AUTH }],
    ['get', '/svc/v2/events/stream', { url: '/svc/v2/events/stream?message_category=alert&message_codes=EMPTY', headers: AUTH }],
    ['post', '/ingest/events', { method: 'POST' as const, url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'text/plain' }, payload: 'x' }],
    ['post', '/ingest/events', { method: 'POST' as const, url: '/ingest/events', headers: { ...INGEST_AUTH, 'content-type': 'application/json' }, payload: '{}' }]
  ] as const
  for (const [method, path, request] of requests) {
    const response = await app.inject(request)
    const { status, message } = response.json() as { status: number, message: string }
    t.equal(status, response.statusCode)
    t.ok(listed(method, path, status).includes(message), `${method} ${request.url}: ${status} ${message} is listed`)
  }
})

t.test('Swagger UI at /docs without a token; the rest still needs one', async (t) => {
  const app = await build(t)
  const page = await app.inject({ url: '/docs' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, /swagger-ui/i)
  for (const url of ['/docs/', '/docs/json', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui-bundle.js']) {
    t.equal((await app.inject({ url })).statusCode, 200, `${url}: 200 without a token`)
  }
  const initializer = await app.inject({ url: '/docs/static/swagger-initializer.js' })
  t.match(initializer.body, /"persistAuthorization":\s*true/, 'the token is kept across reloads')
  t.same((await app.inject({ url: '/docs/json' })).json(), (await app.inject({ url: '/svc/v2/openapi.json' })).json(), 'the same document')

  t.equal((await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z' })).statusCode, 401, 'the events still need a token')
  t.equal((await app.inject({ url: '/docs-not/x' })).statusCode, 401, 'a path next to /docs is not public')
  t.equal((await app.inject({ url: '/svc/v2/openapi.json/x' })).statusCode, 401, 'nor one below the document')
})

t.test('the document follows SERVICE_SEGMENT', async (t) => {
  const app = await build(t, { serviceSegment: 'api' })
  const doc = await documentOf(t, app, '/api/v2/openapi.json')
  t.ok(doc.paths['/api/v2/events'], 'the events under the segment')
  t.ok(doc.paths['/api/v2/events']?.get?.responses['403'], 'documented as under the default segment')
  t.equal((await app.inject({ url: '/svc/v2/openapi.json' })).statusCode, 401, 'not under the default one')
  for (const prefix of ['/api/docs', '/docs']) {
    const page = await app.inject({ url: prefix })
    t.equal(page.statusCode, 200, `Swagger UI at ${prefix} without a token`)
    t.match(page.body, /swagger-ui/i)
    t.same((await app.inject({ url: `${prefix}/json` })).json(), doc, `${prefix}: the document of the segment`)
  }
  t.equal((await app.inject({ url: '/svc/docs' })).statusCode, 401, 'not under the default segment')
})
