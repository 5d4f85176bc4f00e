import { Type, type Static } from '@sinclair/typebox'

export const IngestRefusal = Type.Object({
  line: Type.Integer({ minimum: 1, description: 'the 1-based line of the NDJSON body, or the array index + 1' }),
  reason: Type.String({ description: 'why the line was not stored' })
}, { additionalProperties: false })

export const IngestResponse = Type.Object({
  written: Type.Integer({ minimum: 0, description: 'events stored by this request' }),
  unchanged: Type.Integer({ minimum: 0, description: 'events already stored with the same fields' }),
  refused: Type.Array(IngestRefusal, { description: 'lines not stored, in line order' })
}, { additionalProperties: false })

export type IngestResponse = Static<typeof IngestResponse>

export const NDJSON_CONTENT_TYPE = 'application/x-ndjson'
