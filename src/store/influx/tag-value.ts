/**
 * Line protocol cannot end a tag value with a backslash: it would escape the separator after it.
 * Such a value is stored with one space appended. Identifiers never end in white space, so a
 * trailing space read back can only be this padding, and the mapping is exact both ways.
 */
export function encodeTagValue (id: string): string {
  return id.endsWith('\\') ? id + ' ' : id
}

export function decodeTagValue (stored: string): string {
  return stored.endsWith(' ') ? stored.slice(0, -1) : stored
}
