import type { MessageCategory } from '../../schemas/message.js'
import type { EventSpecification } from '../../schemas/specifications.js'
import { BASE_LANGUAGES, BASE_MESSAGE_CODES } from './base-message-codes.js'
import type { DeviceFamily } from './device-types.js'
import { faultVariant } from './fault-variants.js'

/** Without --codes the catalog is the hand-written one. */
export const BASE_CODE_COUNT = BASE_MESSAGE_CODES.length

export interface MessageCatalog {
  /** What specifications.json holds, in catalog order. */
  specifications: EventSpecification[]
  categoryOf: ReadonlyMap<string, MessageCategory>
  /** The numbered fault codes of each device family (none when the catalog has no more than the base codes). */
  faultCodes: ReadonlyMap<DeviceFamily, readonly string[]>
}

/** The first `size` base codes, then numbered fault codes until there are `size` codes. */
export function buildCatalog (size: number): MessageCatalog {
  const specifications: EventSpecification[] = []
  const faultCodes = new Map<DeviceFamily, string[]>()
  for (const base of BASE_MESSAGE_CODES.slice(0, size)) {
    specifications.push({
      message_code: base.code,
      message_category: base.category,
      details: BASE_LANGUAGES.map((language) => {
        const [description, rootCause, solution] = base.texts[language]
        return { language, description, root_cause: rootCause, solution }
      })
    })
  }
  for (let index = 0; specifications.length < size; index++) {
    const variant = faultVariant(index)
    specifications.push({ message_code: variant.code, message_category: 'alert', details: variant.details })
    const codes = faultCodes.get(variant.family)
    if (codes === undefined) faultCodes.set(variant.family, [variant.code])
    else codes.push(variant.code)
  }
  return {
    specifications,
    categoryOf: new Map(specifications.map((specification) => [specification.message_code, specification.message_category])),
    faultCodes
  }
}
