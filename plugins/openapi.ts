import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifySchema, RouteOptions } from 'fastify'
import { Type, type TSchema } from '@sinclair/typebox'
import { ErrorCode, ErrorObject, type ErrorCodeName } from '../schemas/error.js'
import { NDJSON_CONTENT_TYPE } from '../schemas/ingest.js'
import { MessageRecord } from '../schemas/message.js'
import { projectRoot } from '../src/project-root.js'

export interface OpenapiOptions {
  /** SERVICE_SEGMENT: the document is served at `/<segment>/v2/openapi.json`. */
  serviceSegment: string
}

/** Where Swagger UI is served (its page, its assets and its copy of the document). */
const DOCS_PREFIX = '/docs'

/** What each error code means, for the answers' descriptions (a route may say it more precisely). */
const MEANING: Record<ErrorCodeName, string> = {
  unauthorized_request: 'no token, an unknown one, a malformed `Authorization` header, or two of them',
  invalid_parameter: 'an unknown parameter name, or a bad value (a list with no item, a category other than `alert` or `notification`)',
  duplicate_parameter: 'a parameter given twice, however it was spelled',
  missing_parameter: 'no `start_date` (or no parameter at all)',
  invalid_parameter_combination: 'more than one of the parameters that exclude each other',
  invalid_start_date: '`start_date` is not an RFC 3339 date-time earlier than now',
  invalid_end_date: '`end_date` is not an RFC 3339 date-time later than `start_date` and earlier than now',
  not_implemented: 'this provider serves no specifications (`SPECIFICATIONS_FILE=none`); the code is in the `X-Error-Message` header, as HTTP allows a 204 no body',
  forbidden: 'a known token without the right this route needs (an ingest token reading events, a consumer token posting them)',
  invalid_body: 'a body that is not a JSON array, or NDJSON of which not one line is JSON',
  payload_too_large: 'a body over `INGEST_MAX_BYTES`, or of more lines or array elements than `INGEST_MAX_LINES`',
  unsupported_media_type: 'a body of another type than `application/x-ndjson` or `application/json`, or no `Content-Type`',
  not_found: 'a path or method no route serves, or a URL that cannot be decoded (after the token check)',
  bad_request: 'HTTP the server cannot read (a malformed request line or header); the connection is closed',
  request_timeout: 'the request line and headers did not arrive within `REQUEST_TIMEOUT_MS`; the connection is closed',
  request_header_fields_too_large: 'the request line and headers are over 16 KiB (a URL that long too); the connection is closed',
  too_many_requests: 'more requests than `RATE_LIMIT` allows the token (with `Retry-After`; only when `RATE_LIMIT` is set)',
  internal_error: 'an unexpected failure; the cause goes to the log only',
  service_unavailable: 'the store cannot answer now, the provider is saturated, or it is shutting down (with `Retry-After`)'
}

/** What the documentation says of one route, beside what its schema says. */
interface RouteDoc {
  operationId: string
  tag: string
  summary: string
  description: string
  /** The success answers, by status: their descriptions, and the media type when not JSON. */
  answers: Record<number, { description: string, mediaType?: string, headers?: Record<string, TSchema> }>
  /** The error codes the route answers with; their statuses are ErrorCode's. */
  errors: ErrorCodeName[]
  /** What a code means on this route, where it says more than MEANING. */
  meanings?: Partial<Record<ErrorCodeName, string>>
  /** Request headers the route reads (documentation only: the route does not validate them). */
  headers?: Record<string, TSchema>
  /** The request body by media type (documentation only: the route parses it itself). */
  body?: Record<string, TSchema>
}

/** The errors every route behind a token can answer with. */
const TOKEN_ERRORS: ErrorCodeName[] = ['unauthorized_request', 'forbidden', 'too_many_requests', 'internal_error', 'service_unavailable']

const retryAfter = Type.Integer({ minimum: 0, description: 'seconds to wait before trying again' })

const ROUTES: Record<string, RouteDoc> = {
  'GET /v2/events': {
    operationId: 'getEvents',
    tag: 'events',
    summary: 'Events of devices, spaces and tags in a time window',
    description: 'The alerts and notifications of the devices and spaces selected (`device_ids`, `space_ids`, `tag_ids`: their union; none: every entity the token may see), with `start_date <= date_time < end_date`, ordered by `date_time` then `message_id`. ' +
      'At most one of `message_ids`, `message_category` and `message_codes` narrows them further. Unknown devices, spaces and tags are reported in `errors`; the answer is still 200.\n\n' +
      'The checks run in this order, the first failure wins: token (401, then 403 `forbidden`), unknown name (400 `invalid_parameter`), repeated name (400 `duplicate_parameter`), no `start_date` (400 `missing_parameter`), exclusive parameters (400 `invalid_parameter_combination`), values (400 `invalid_parameter`), `start_date` (403 `invalid_start_date`), `end_date` (403 `invalid_end_date`).',
    answers: { 200: { description: 'The events of the window, and an item error per unknown device, space or tag' } },
    errors: ['invalid_parameter', 'duplicate_parameter', 'missing_parameter', 'invalid_parameter_combination', 'invalid_start_date', 'invalid_end_date', ...TOKEN_ERRORS],
    meanings: { invalid_parameter_combination: 'more than one of `message_ids`, `message_category` and `message_codes`' }
  },
  'GET /v2/event_specifications': {
    operationId: 'getEventSpecifications',
    tag: 'specifications',
    summary: 'Description, root cause and solution of message codes',
    description: 'The specifications of the codes asked for (every code without `message_codes`), each in English (`eng`) and in each language asked for that the provider has. ' +
      'Answers carry an `ETag` and `Cache-Control: max-age=0, must-revalidate`: ask again with `If-None-Match` to get 304 while they hold.',
    answers: {
      200: { description: 'The specifications, and an item error per unknown message code', headers: { etag: Type.String({ description: 'a strong validator of this answer, for If-None-Match' }) } },
      304: { description: 'The ETag given in `If-None-Match` still holds: no body' }
    },
    errors: ['not_implemented', 'invalid_parameter', 'duplicate_parameter', ...TOKEN_ERRORS],
    headers: { 'if-none-match': Type.String({ description: 'the ETag of an answer kept (or `*`): 304 when it still holds' }) }
  },
  'GET /v2/events/stream': {
    operationId: 'streamEvents',
    tag: 'live',
    summary: 'Events pushed as they are accepted (Server-Sent Events)',
    description: 'The events endpoint\'s selection, checks and error codes (as ordinary JSON answers before the stream starts), then a `text/event-stream` that stays open: ' +
      'optionally the stored events from `start_date`, then every accepted event that matches, live. `message_ids` and `end_date` are unknown names here (400 `invalid_parameter`).\n\n' +
      'Frames: `event: item_errors` first when IDs are unknown (data: the item error array); then per event `id: <cursor>`, `event: message`, `data: <the message object>` (a `start_date` replay\'s events: `id: <cursor>@<date_time>`, its last one `id: <cursor>`); `event: reset` with `{"since": "<date_time>"}` when `Last-Event-ID` is older than what is kept, or names an event of a replay left before its end (backfill from `since` with the events endpoint); a `: keep-alive` comment every `STREAM_HEARTBEAT_MS`.',
    answers: { 200: { description: 'The stream of events (Server-Sent Events), open until either side closes it', mediaType: 'text/event-stream' } },
    errors: ['invalid_parameter', 'duplicate_parameter', 'invalid_parameter_combination', 'invalid_start_date', ...TOKEN_ERRORS],
    meanings: {
      invalid_parameter_combination: 'both `message_category` and `message_codes`',
      service_unavailable: '`STREAM_MAX_CLIENTS` streams are open, the provider is saturated, or it is shutting down (with `Retry-After`)',
      too_many_requests: 'the token has `STREAM_MAX_CLIENTS_PER_TOKEN` streams open already, or more requests than `RATE_LIMIT` allows it (with `Retry-After`)'
    },
    headers: { 'last-event-id': Type.String({ description: 'the `id` of the last event received: every matching event accepted after it, then live (takes precedence over `start_date`)' }) }
  },
  'POST /ingest/events': {
    operationId: 'ingestEvents',
    tag: 'live',
    summary: 'Events in, from the devices\' side (ingest tokens only)',
    description: 'Each line (or array element, numbered from 1) is checked as `npm run ingest` checks a line: an invalid one is refused with its line and reason; the same `message_id` with the same fields is `unchanged`, with other fields refused; an event of a device or space the registry does not know is refused. ' +
      'The 200 is sent once every written event is stored for good; the events are then served and pushed to streams. An empty body is 200 with nothing written.',
    answers: { 200: { description: 'What was written, what was already stored, and what was refused and why' } },
    errors: ['invalid_body', 'payload_too_large', 'unsupported_media_type', 'request_timeout', ...TOKEN_ERRORS],
    meanings: {
      request_timeout: 'the body did not arrive within `REQUEST_TIMEOUT_MS` (as the request line and headers of any request); the connection is closed',
      forbidden: 'a consumer token (only ingest tokens post events)',
      service_unavailable: 'the store cannot take the write now (nothing of it is stored or pushed), `INGEST_MAX_BYTES_IN_FLIGHT` bytes of bodies are being received or read, the provider is saturated, or it is shutting down (with `Retry-After`)'
    },
    body: {
      [NDJSON_CONTENT_TYPE]: Type.String({
        description: 'NDJSON: one event object per line, as in EVENTS_FILE (the fields of the JSON array\'s elements)',
        examples: ['{"message_id":"e-1001","message_code":"EMPTY","message_category":"alert","date_time":"2025-03-01T10:00:00Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}\n']
      }),
      'application/json': Type.Array(MessageRecord, { description: 'a JSON array of event objects' })
    }
  },
  'GET /health/live': {
    operationId: 'healthLive',
    tag: 'health',
    summary: 'Liveness probe (no token)',
    description: 'Answers while the process answers.',
    answers: { 200: { description: 'The process answers' } },
    errors: []
  },
  'GET /health/ready': {
    operationId: 'healthReady',
    tag: 'health',
    summary: 'Readiness probe (no token)',
    description: 'Whether the store can serve events, and with `MQTT_URL` whether the broker is connected (the provider serves and ingests without it).',
    answers: {
      200: { description: 'The store can serve events' },
      503: { description: 'The store cannot serve events now (why goes to the log)' }
    },
    errors: []
  }
}

/** The description of an error status: the codes it carries on this route, each with its meaning. */
function errorDescription (status: number, codes: readonly ErrorCodeName[], meanings: Partial<Record<ErrorCodeName, string>> = {}): string {
  const carrier = status === 204 ? 'No body; the `X-Error-Message` header is' : 'Error object; `message` is'
  return `${carrier} one of: ${codes.map((code) => `\`${code}\``).join(', ')}\n\n` +
    codes.map((code) => `- \`${code}\`: ${meanings[code] ?? MEANING[code]}`).join('\n')
}

type JsonObject = Record<string, unknown>

/**
 * A schema as the document shows it: each subschema with an `$id` (ErrorObject, ItemError,
 * Message) becomes the component of that name, referenced where it was; `const` is written as a
 * one-value `enum` (as @fastify/swagger writes the rest, for Swagger UI). TypeBox's symbol keys
 * are left behind.
 */
function documented (schema: unknown, components: Map<string, JsonObject>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => documented(item, components))
  if (typeof schema !== 'object' || schema === null) return schema
  const copy: JsonObject = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue
    if (key === 'const') copy.enum = [value]
    else copy[key] = documented(value, components)
  }
  const id = (schema as JsonObject).$id
  if (typeof id !== 'string') return copy
  components.set(id, copy)
  return { $ref: `#/components/schemas/${id}` }
}

/** The route's schema as the document shows it: the same schemas, with the descriptions, media types and errors above. */
function documentedSchema (schema: FastifySchema, doc: RouteDoc, isPublic: boolean, components: Map<string, JsonObject>): FastifySchema {
  const routeResponses = (schema.response ?? {}) as Record<string, TSchema>
  const responses: Record<string, JsonObject> = {}
  const json = (body: unknown, mediaType = 'application/json') => ({ [mediaType]: { schema: documented(body, components) } })
  // A status the route's schema has and the table above does not: as the schema says (the tests want a description).
  for (const [status, responseSchema] of Object.entries(routeResponses)) {
    responses[status] = responseSchema.type === 'null'
      ? { type: 'null', description: responseSchema.description }
      : { description: responseSchema.description, content: json(responseSchema) }
  }
  for (const [status, answer] of Object.entries(doc.answers)) {
    const responseSchema = routeResponses[status]
    const headers = answer.headers === undefined ? {} : { headers: documented(answer.headers, components) }
    responses[status] = responseSchema === undefined || responseSchema.type === 'null'
      ? { type: 'null', description: answer.description, ...headers }
      : { description: answer.description, ...headers, content: json(responseSchema, answer.mediaType) }
  }
  const byStatus = new Map<number, ErrorCodeName[]>()
  for (const code of doc.errors) byStatus.set(ErrorCode[code], [...byStatus.get(ErrorCode[code]) ?? [], code])
  for (const [status, codes] of byStatus) {
    const description = errorDescription(status, codes, doc.meanings)
    if (status === 204) {
      // HTTP allows no body: the code is in a header.
      const code = Type.Union(codes.map((code) => Type.Literal(code)), { description: 'the error code' })
      responses[status] = { type: 'null', description, headers: { 'x-error-message': documented(code, components) } }
      continue
    }
    const headers = status === 429 || status === 503 ? { headers: { 'retry-after': documented(retryAfter, components) } } : {}
    responses[status] = { description, ...headers, content: json(ErrorObject) }
  }
  const result: FastifySchema = {
    ...schema,
    operationId: doc.operationId,
    tags: [doc.tag],
    summary: doc.summary,
    description: doc.description,
    response: responses
  }
  if (isPublic) result.security = []
  if (doc.headers !== undefined) {
    result.headers = Type.Object(Object.fromEntries(Object.entries(doc.headers).map(([name, header]) => [name, Type.Optional(header)])))
  }
  if (doc.body !== undefined) {
    result.body = { content: Object.fromEntries(Object.entries(doc.body).map(([type, body]) => [type, { schema: documented(body, components) }])) }
  }
  return result
}

/**
 * The OpenAPI 3.1 document of the interface, generated by `@fastify/swagger` from the routes'
 * own TypeBox schemas (parameters and answers) and the descriptions above, served without a
 * token at `GET /<segment>/v2/openapi.json`; and Swagger UI at `/docs` (`@fastify/swagger-ui`),
 * with the bearer token asked for by its Authorize button. Registered before the routes: both
 * plugins learn the routes from the onRoute hook. What the document shows is documentation only:
 * no route validates differently for it. The operator's `/metrics` is left out; the health
 * probes are in it (no token).
 */
export default fp<OpenapiOptions>(async function openapi (fastify, options) {
  const segmentPrefix = `/${options.serviceSegment}`
  const documentPath = `${segmentPrefix}/v2/openapi.json`
  /** The schemas with an `$id`, filled as the routes are documented (see `documented`). */
  const components = new Map<string, JsonObject>()
  const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { name: string, version: string, description: string }

  const codeTable = (Object.keys(ErrorCode) as ErrorCodeName[])
    .map((code) => `| ${ErrorCode[code]} | \`${code}\` | ${MEANING[code]} |`)
    .join('\n')

  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: pkg.name,
        version: pkg.version,
        summary: pkg.description,
        description: 'The Events Information Interface: the history of alerts and notifications of facility devices and spaces, the descriptions of their message codes, and events live (in over HTTP, out over Server-Sent Events).\n\n' +
          'Every request needs `Authorization: Bearer <token>` (the Authorize button) before any other check, except the health probes and this documentation. ' +
          'Consumer tokens read; ingest tokens post events.\n\n' +
          'Every error is `{ "status": <HTTP status>, "message": "<code>" }` (a 204 carries its code in `X-Error-Message`). Each operation lists the codes it answers with; every code there is, with the statuses that carry them (a malformed request, a request timeout or oversized headers can come on any request):\n\n' +
          '| status | message | when |\n|---|---|---|\n' + codeTable
      },
      servers: [{ url: '/', description: 'this provider' }],
      tags: [
        { name: 'events', description: 'Historical events' },
        { name: 'specifications', description: 'What each message code means, in several languages' },
        { name: 'live', description: 'Events in (ingest) and out (stream) as they happen' },
        { name: 'health', description: 'Probes for orchestrators, without a token' }
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A consumer token (API_TOKENS, TOKENS_FILE or a JWT) to read, an ingest token (INGEST_TOKENS) to post events' }
        }
      },
      security: [{ bearerAuth: [] }]
    },
    transform ({ schema, url, route }) {
      const method = Array.isArray(route.method) ? route.method.join(',') : route.method
      const path = url.startsWith(segmentPrefix + '/') ? url.slice(segmentPrefix.length) : url
      if (url === '/metrics' || method === 'OPTIONS') return { schema: { ...schema, hide: true }, url }
      const doc = ROUTES[`${method} ${path}`]
      if (doc === undefined) return { schema, url }
      return { schema: documentedSchema(schema ?? {}, doc, route.config?.public === true, components), url }
    },
    transformObject (document) {
      if (!('openapiObject' in document)) throw new Error('an OpenAPI document was expected')
      const { openapiObject } = document
      const target = (openapiObject.components ??= {}) as { schemas?: Record<string, unknown> }
      target.schemas = { ...target.schemas, ...Object.fromEntries(components) }
      return openapiObject
    }
  })

  fastify.get(documentPath, { schema: { hide: true }, config: { public: true } }, async () => fastify.swagger())

  // Swagger UI's routes (its page, assets and its copy of the document) are served without a
  // token, at /docs and under the service segment too (/svc/docs, /fds/docs): the page follows
  // the segment as everything else does, and stays where the README says it is.
  for (const routePrefix of [DOCS_PREFIX, `${segmentPrefix}${DOCS_PREFIX}`]) {
    await fastify.register(async function docs (instance) {
      instance.addHook('onRoute', (route: RouteOptions) => {
        route.config = { ...route.config, public: true }
      })
      await instance.register(swaggerUi, {
        routePrefix,
        uiConfig: {
          persistAuthorization: true,
          deepLinking: true,
          docExpansion: 'list',
          defaultModelsExpandDepth: 1,
          displayRequestDuration: true,
          displayOperationId: false,
          tryItOutEnabled: false
        }
      })
    })
  }
}, { name: 'openapi', fastify: '5.x' })
