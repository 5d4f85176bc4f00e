import { intern } from './intern.js'

/**
 * A small number per device or space ID, so that answers can be checked against the registry and
 * a query's entities by number (store-contract.ts) instead of reading each event's ID strings:
 * for an answer of a thousand events of one space, those reads (message objects scattered over
 * a heap of a million events, then hash lookups) were about half of the provider's CPU
 * (BENCHMARKS.md, "What profiling found").
 *
 * One numbering for the process, as for interned strings (intern.ts): the registry numbers its
 * entities when it loads, the memory store numbers its events' entities when it indexes them. A
 * device and a space that share an ID share its number; which column or set is read tells them
 * apart. Bounded by the distinct IDs of the registry and of the stored events (an ingest refuses
 * events of unknown entities, and queries select known entities only), and the identifiers an
 * ingest's scan remembers (at most MAX_REMEMBERED, wire-line.ts), which it checks by number.
 */
const numbers = new Map<string, number>()
/** The IDs by number. */
const ids: string[] = []

/** The number of an ID, given it on first sight. */
export function entityNumber (id: string): number {
  let number = numbers.get(id)
  if (number === undefined) {
    numbers.set(id, number = numbers.size)
    // The interned string: indexes keyed by entityIdOf compare pointers with the registry's.
    ids.push(intern(id))
  }
  return number
}

/** The ID of a number entityNumber gave. */
export function entityIdOf (number: number): string {
  return ids[number]!
}

/** How many IDs are numbered. */
export function entityNumberCount (): number {
  return numbers.size
}

/** At most this many numbers are kept as a list; larger sets are a byte per number so far. */
const LIST_AT_MOST = 8

/**
 * Some entities by number. A small set (a request for one device) is a short list: no
 * allocation of a byte per numbered ID on every request.
 */
export class EntityNumberSet {
  readonly #bits: Uint8Array | undefined
  /** A plain array: Int32Array.from was most of a one-device request's numbering. */
  readonly #list: number[] | undefined

  constructor (ids: Iterable<string>) {
    const members: number[] = []
    for (const id of ids) members.push(entityNumber(id))
    if (members.length <= LIST_AT_MOST) {
      this.#list = members
      this.#bits = undefined
    } else {
      // Every member is numbered by now; a number past the largest member's is not a member.
      let largest = 0
      for (const member of members) if (member > largest) largest = member
      this.#bits = new Uint8Array(largest + 1)
      for (const member of members) this.#bits[member] = 1
      this.#list = undefined
    }
  }

  has (number: number): boolean {
    const bits = this.#bits
    if (bits !== undefined) return bits[number] === 1
    const list = this.#list!
    for (let i = 0; i < list.length; i++) if (list[i] === number) return true
    return false
  }
}
