import type { Message } from '../../schemas/message.js'

/** Where events go when MQTT_TOPIC_PREFIX is not set. */
export const DEFAULT_MQTT_TOPIC_PREFIX = 'svc/v2/events'

/**
 * What a topic level cannot carry as is:
 * - `/` (the level separator), `+` and `#` (wildcards) and `%` (the escape itself);
 * - every control character: U+0000–U+001F, U+007F and U+0080–U+009F;
 * - what a broker refuses in a topic name as malformed UTF-8 (mosquitto drops the connection, so
 *   one such event would stall every later one): the non-characters U+FDD0–U+FDEF and U+xFFFE,
 *   U+xFFFF of every plane, and lone UTF-16 surrogates (which have no UTF-8 form at all).
 * Everything else (letters of any script, spaces, punctuation) is left as is.
 */
const UNSAFE = /[%/+#\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}]/gu

const hex = (byte: number) => '%' + byte.toString(16).toUpperCase().padStart(2, '0')

/** One unsafe character (one code point, or one lone surrogate) as its UTF-8 bytes, `%XX` each. */
function percentBytes (char: string): string {
  const code = char.codePointAt(0)!
  if (code >= 0xd800 && code <= 0xdfff) {
    // A lone surrogate has no UTF-8 form: its three bytes in generalised UTF-8, which decodeTopicLevel reverses.
    return hex(0xe0 | (code >> 12)) + hex(0x80 | ((code >> 6) & 0x3f)) + hex(0x80 | (code & 0x3f))
  }
  let out = ''
  for (const byte of Buffer.from(char, 'utf8')) out += hex(byte)
  return out
}

/** One identifier as exactly one topic level, safe under wildcards (see UNSAFE). */
export function encodeTopicLevel (id: string): string {
  return id.replace(UNSAFE, percentBytes)
}

/** Decodes a run of %XX bytes: UTF-8, with lone surrogates allowed; a malformed byte gives U+FFFD. */
function decodeBytes (bytes: number[]): string {
  let out = ''
  let i = 0
  while (i < bytes.length) {
    const lead = bytes[i]!
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0
    let code = length === 1 ? lead : length === 2 ? lead & 0x1f : length === 3 ? lead & 0x0f : lead & 0x07
    let valid = length > 0 && i + length <= bytes.length
    for (let k = 1; valid && k < length; k++) {
      const next = bytes[i + k]!
      if ((next & 0xc0) !== 0x80) valid = false
      code = (code << 6) | (next & 0x3f)
    }
    if (valid && ((length === 3 && code < 0x800) || (length === 4 && (code < 0x10000 || code > 0x10ffff)))) valid = false
    if (!valid) {
      out += '\ufffd'
      i += 1
      continue
    }
    out += code >= 0xd800 && code <= 0xdfff ? String.fromCharCode(code) : String.fromCodePoint(code)
    i += length
  }
  return out
}

/** The inverse of the encoding of each ID level: `%XX` sequences back to the characters they encode. */
export function decodeTopicLevel (level: string): string {
  return level.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes: number[] = []
    for (let i = 0; i < run.length; i += 3) bytes.push(Number.parseInt(run.slice(i + 1, i + 3), 16))
    return decodeBytes(bytes)
  })
}

/**
 * The topic of one event: `<prefix>/<message_category>/<message_code>/<space_id>/<device_id>`.
 * A space's own event (no device_id) ends with an empty level (the topic ends with `/`), and a
 * missing space_id is an empty level too, so every event topic has the same depth and
 * `<prefix>/alert/#` or `<prefix>/+/+/<space>/+` select as expected.
 */
export function eventTopic (prefix: string, message: Message): string {
  return `${prefix}/${message.message_category}/${encodeTopicLevel(message.message_code)}/` +
    `${encodeTopicLevel(message.space_id ?? '')}/${encodeTopicLevel(message.device_id ?? '')}`
}
