/** Character codes (one byte each in UTF-8) that the byte and text scanners of data lines look for. */
export const TAB = 0x09
export const LF = 0x0a
export const CR = 0x0d
export const SPACE = 0x20
export const QUOTE = 0x22
export const COMMA = 0x2c
export const COLON = 0x3a
export const OPEN_ARRAY = 0x5b
export const BACKSLASH = 0x5c
export const CLOSE_ARRAY = 0x5d
export const OPEN_OBJECT = 0x7b
export const CLOSE_OBJECT = 0x7d
export const DEL = 0x7f
