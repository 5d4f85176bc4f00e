import { Type, type Static } from '@sinclair/typebox'
import { Identifier, identifierList } from './identifier.js'
import { MessageCategory } from './message.js'
import { ItemError } from './events.js'

/** ISO 639-2 three-letter code, as the provider stores it (lower case). */
export const LanguageCode = Type.String({ pattern: '^[a-z]{3}$', description: 'an ISO 639-2 code: three lower-case letters' })

export const SpecificationDetail = Type.Object({
  language: LanguageCode,
  description: Type.String({ description: 'what the code means' }),
  root_cause: Type.String({ description: 'why it happens' }),
  solution: Type.String({ description: 'what to do about it' })
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
  message_codes: Type.Optional(identifierList('a comma separated list of message codes: these, in the order given, with an item error (invalid_message_code) per unknown one; every code, in the file\'s order, when absent')),
  languages: Type.Optional(identifierList('a comma separated list of ISO 639-2 language codes (any case) wanted besides eng, which always comes; unsupported ones are left out'))
}, { additionalProperties: false })

export type SpecificationsQuerystring = Static<typeof SpecificationsQuerystring>

export const SpecificationsResponse = Type.Object({
  data: Type.Array(EventSpecification, { description: 'the specifications of the codes asked for' }),
  errors: Type.Array(ItemError, { description: 'an item error per unknown message code, in the order given' })
}, { additionalProperties: false })

export type SpecificationsResponse = Static<typeof SpecificationsResponse>
