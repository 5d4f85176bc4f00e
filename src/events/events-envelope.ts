import fastJson from 'fast-json-stringify'
import { EventsResponse, type ItemError } from '../../schemas/events.js'

const serializeEventsResponse = fastJson(EventsResponse)

/** EventsResponse writes data first, so its text begins with the opening of the data array. */
const DATA_OPENING = '{"data":['

/** As bytes: written into every answer, encoding them each time was a twentieth of a small answer's work. */
export interface EventsEnvelope {
  /** What goes before the first message. */
  head: Buffer
  /** What goes after the last message: the end of data, the item errors, the end of the object. */
  tail: Buffer
}

/**
 * The events object around its messages, cut from the EventsResponse schema's own serialisation
 * of an answer with no messages, so the envelope cannot drift from the schema. The messages go
 * in between, comma separated.
 */
export function eventsEnvelope (errors: readonly ItemError[]): EventsEnvelope {
  if (errors.length === 0) return NO_ITEM_ERRORS
  return envelopeOf(errors)
}

function envelopeOf (errors: readonly ItemError[]): EventsEnvelope {
  const empty = serializeEventsResponse({ data: [], errors: errors as ItemError[] })
  if (!empty.startsWith(DATA_OPENING + ']')) throw new Error(`EventsResponse no longer begins with its data: ${empty.slice(0, 40)}`)
  return { head: Buffer.from(DATA_OPENING), tail: Buffer.from(empty.slice(DATA_OPENING.length)) }
}

const NO_ITEM_ERRORS = envelopeOf([])
