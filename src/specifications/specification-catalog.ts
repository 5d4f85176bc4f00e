import { createHash } from 'node:crypto'
import type { ItemError } from '../../schemas/events.js'
import type { EventSpecification, SpecificationsResponse } from '../../schemas/specifications.js'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { ContentCoding } from '../http/accept-encoding.js'

export const ENGLISH = 'eng'

export interface SerializedAnswer {
  /** Bytes, not a string: a cached answer is then sent with no encoding per request. */
  body: Buffer
  /** A strong validator of the body, for If-None-Match. */
  etag: string
  /** The body compressed, made once per coding when first asked for (kept with the answer). */
  compressed?: Partial<Record<ContentCoding, Buffer>>
}

/** The body of an answer in a content coding, compressed once and kept. */
export function compressedBody (answer: SerializedAnswer, coding: ContentCoding): Buffer {
  answer.compressed ??= {}
  answer.compressed[coding] ??= coding === 'br'
    ? brotliCompressSync(answer.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: answer.body.length } })
    : gzipSync(answer.body, { level: 9 })
  return answer.compressed[coding]
}

/** The entity tag of an answer's body in a coding: each representation has its own. */
export function etagOf (answer: SerializedAnswer, coding: ContentCoding | undefined): string {
  return coding === undefined ? answer.etag : `${answer.etag.slice(0, -1)}-${coding}"`
}

/**
 * The cached answers' bytes, all questions together. A client can ask as many distinct questions
 * as it likes (codes and languages in any order and subset), and the whole catalogue in five
 * languages is a few hundred kilobytes: bounding by entries let 1,200 questions hold 234 MB.
 */
export const CACHE_LIMIT_BYTES = 16 * 1024 * 1024

/**
 * The message-code descriptions, answered from serialised bodies: specifications are static, so
 * each distinct question is serialised once and its ETag computed once.
 */
export class SpecificationCatalog {
  readonly #byCode = new Map<string, EventSpecification>()
  readonly #languages = new Set<string>()
  /** Oldest first: the first to go when the cache is full. */
  readonly #answers = new Map<string, SerializedAnswer>()
  #cachedBytes = 0

  constructor (specifications: readonly EventSpecification[]) {
    for (const specification of specifications) {
      this.#byCode.set(specification.message_code, specification)
      for (const detail of specification.details) this.#languages.add(detail.language)
    }
  }

  /** The bytes of the answers kept. */
  get cachedBytes (): number {
    return this.#cachedBytes
  }

  get codeCount (): number {
    return this.#byCode.size
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
      this.#keep(key, answer)
    }
    return answer
  }

  #keep (key: string, answer: SerializedAnswer): void {
    const size = answer.body.length + key.length
    if (size > CACHE_LIMIT_BYTES) return
    for (const [oldKey, old] of this.#answers) {
      if (this.#cachedBytes + size <= CACHE_LIMIT_BYTES) break
      this.#answers.delete(oldKey)
      this.#cachedBytes -= old.body.length + oldKey.length
    }
    this.#answers.set(key, answer)
    this.#cachedBytes += size
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
