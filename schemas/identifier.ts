import { Type } from '@sinclair/typebox'

/**
 * An identifier as stored: any non-empty string without a comma (lists are comma separated),
 * without surrounding white space (list items are trimmed, so such an ID could never be asked
 * for) and without control characters, C0, DEL or C1 (InfluxDB's line protocol cannot carry the
 * C0 ones in a tag, and none of them is text anyone can read or type).
 */
export const Identifier = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^(?!\\s)[^,\\x00-\\x1f\\x7f-\\x9f]*(?<!\\s)$',
  description: 'an identifier: 1 to 1024 characters, no comma, no control character, no white space at either end'
})

/** A comma separated list in a query string: at least one item that is not blank. */
export const IdentifierList = Type.String({ pattern: '[^,\\s]' })

/** IdentifierList with what the parameter selects, for the OpenAPI document (the same check). */
export const identifierList = (description: string) => Type.String({ pattern: IdentifierList.pattern, description })
