import { Type } from '@sinclair/typebox'

/**
 * An identifier as stored: any non-empty string without a comma (lists are comma separated)
 * and without surrounding white space (list items are trimmed, so such an ID could never be asked for).
 */
export const Identifier = Type.String({
  minLength: 1,
  maxLength: 1024,
  pattern: '^(?!\\s)[^,]*(?<!\\s)$',
  description: 'an identifier: 1 to 1024 characters, no comma, no white space at either end'
})

/** A comma separated list in a query string: at least one item that is not blank. */
export const IdentifierList = Type.String({ pattern: '[^,\\s]' })
