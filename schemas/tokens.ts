import { Type, type Static } from '@sinclair/typebox'
import { Identifier } from './identifier.js'

/** What a scoped token may see: these entities (a tag: its devices and spaces). No scope: every entity. */
export const TokenScope = Type.Object({
  tag_ids: Type.Optional(Type.Array(Identifier)),
  space_ids: Type.Optional(Type.Array(Identifier)),
  device_ids: Type.Optional(Type.Array(Identifier))
}, { additionalProperties: false })

export type TokenScope = Static<typeof TokenScope>

/** TOKENS_FILE: named consumer tokens, stored only as their SHA-256. */
export const TokensFile = Type.Object({
  tokens: Type.Array(Type.Object({
    name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:@/-]+$', description: 'for logs and rate limits' }),
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'the hex SHA-256 of the token' }),
    scope: Type.Optional(TokenScope),
    ingest: Type.Optional(Type.Boolean({ description: 'may also post to /ingest/events' }))
  }, { additionalProperties: false }))
}, { additionalProperties: false })

export type TokensFile = Static<typeof TokensFile>
