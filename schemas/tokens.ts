import { Type, type Static } from '@sinclair/typebox'
import { Identifier } from './identifier.js'

/** What a scoped token may see: these entities (a tag: its devices and spaces). No scope: every entity. */
export const TokenScope = Type.Object({
  tag_ids: Type.Optional(Type.Array(Identifier)),
  space_ids: Type.Optional(Type.Array(Identifier)),
  device_ids: Type.Optional(Type.Array(Identifier))
}, { additionalProperties: false })

export type TokenScope = Static<typeof TokenScope>

// Not `jwt:…`: the name logs give a JWT's subject, which a file's entry must not pass for.
export const TokenName = Type.String({ minLength: 1, maxLength: 128, pattern: '^(?!jwt:)[A-Za-z0-9._:@/-]+$', description: 'for logs and rate limits (letters, digits and ._:@/-, not beginning with jwt:, which logs give JWTs)' })

/** One consumer token of TOKENS_FILE, stored only as its SHA-256. */
export const TokenEntry = Type.Object({
  name: TokenName,
  // writeOnly: a misfit's message does not repeat the value (src/data/schema-check.ts), which may be the token itself.
  sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'the hex SHA-256 of the token', writeOnly: true }),
  scope: Type.Optional(TokenScope),
  ingest: Type.Optional(Type.Boolean({ description: 'may also post to /ingest/events' }))
}, { additionalProperties: false })

export type TokenEntry = Static<typeof TokenEntry>

/** TOKENS_FILE: named consumer tokens. */
export const TokensFile = Type.Object({
  tokens: Type.Array(TokenEntry)
}, { additionalProperties: false })

export type TokensFile = Static<typeof TokensFile>
