import { createHash } from 'node:crypto'
import type { ItemError } from '../../schemas/events.js'
import type { EventSpecification, SpecificationsResponse } from '../../schemas/specifications.js'

export const ENGLISH = 'eng'

export interface SerializedAnswer {
  /** Bytes, not a string: a cached answer is then sent with no encoding per request. */
  body: Buffer
  /** A strong validator of the body, for If-None-Match. */
  etag: string
}

const CACHE_LIMIT = 1000

/**
 * The message-code descriptions, answered from serialised bodies: specifications are static, so
 * each distinct question is serialised once and its ETag computed once.
 */
export class SpecificationCatalog {
  readonly #byCode = new Map<string, EventSpecification>()
  readonly #languages = new Set<string>()
  readonly #answers = new Map<string, SerializedAnswer>()

  constructor (specifications: readonly EventSpecification[]) {
    for (const specification of specifications) {
      this.#byCode.set(specification.message_code, specification)
      for (const detail of specification.details) this.#languages.add(detail.language)
    }
  }

  get codes (): IterableIterator<string> {
    return this.#byCode.keys()
  }

  /**
   * codes undefined: every code, in file order; otherwise the listed codes in the order given.
   * Details hold English and each listed language the provider has, in the file's order.
   */
  answer (codes: readonly string[] | undefined, languages: readonly string[] | undefined): SerializedAnswer {
    const wanted = new Set([ENGLISH])
    for (const language of languages ?? []) {
      const code = language.toLowerCase()
      if (this.#languages.has(code)) wanted.add(code)
    }
    const key = (codes === undefined ? '*' : codes.join(',')) + '|' + [...wanted].sort().join(',')
    let answer = this.#answers.get(key)
    if (answer === undefined) {
      answer = this.#serialize(codes, wanted)
      if (this.#answers.size >= CACHE_LIMIT) this.#answers.delete(this.#answers.keys().next().value!)
      this.#answers.set(key, answer)
    }
    return answer
  }

  #serialize (codes: readonly string[] | undefined, languages: ReadonlySet<string>): SerializedAnswer {
    const response: SpecificationsResponse = { data: [], errors: [] }
    for (const code of codes ?? this.#byCode.keys()) {
      const specification = this.#byCode.get(code)
      if (specification === undefined) {
        const error: ItemError = { id: code, item_type: 'message_code', message: 'invalid_message_code' }
        response.errors.push(error)
        continue
      }
      response.data.push({
        message_code: specification.message_code,
        message_category: specification.message_category,
        details: specification.details.filter((detail) => languages.has(detail.language))
      })
    }
    const body = Buffer.from(JSON.stringify(response))
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` }
  }
}
