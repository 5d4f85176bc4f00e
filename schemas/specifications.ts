import { Type, type Static } from '@sinclair/typebox'
import { Identifier, IdentifierList } from './identifier.js'
import { MessageCategory } from './message.js'
import { ItemError } from './events.js'

/** ISO 639-2 three-letter code, as the provider stores it (lower case). */
export const LanguageCode = Type.String({ pattern: '^[a-z]{3}$', description: 'an ISO 639-2 code: three lower-case letters' })

export const SpecificationDetail = Type.Object({
  language: LanguageCode,
  description: Type.String(),
  root_cause: Type.String(),
  solution: Type.String()
}, { additionalProperties: false })

export type SpecificationDetail = Static<typeof SpecificationDetail>

export const EventSpecification = Type.Object({
  message_code: Identifier,
  message_category: MessageCategory,
  details: Type.Array(SpecificationDetail, { minItems: 1 })
}, { additionalProperties: false })

export type EventSpecification = Static<typeof EventSpecification>

/** The SPECIFICATIONS_FILE: every code with all the languages the provider has. */
export const SpecificationsFile = Type.Array(EventSpecification)

export const SpecificationsQuerystring = Type.Object({
  message_codes: Type.Optional(IdentifierList),
  languages: Type.Optional(IdentifierList)
}, { additionalProperties: false })

export type SpecificationsQuerystring = Static<typeof SpecificationsQuerystring>

export const SpecificationsResponse = Type.Object({
  data: Type.Array(EventSpecification),
  errors: Type.Array(ItemError)
}, { additionalProperties: false })

export type SpecificationsResponse = Static<typeof SpecificationsResponse>
