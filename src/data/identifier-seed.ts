import { randomBytes } from 'node:crypto'

/**
 * Where the provider's hashes of identifiers start (FNV-1a, from 0x811c9dc5 ^ this), random for
 * each process: with hashes a client could compute, an ingest of identifiers that all share one
 * would fill one run of a table's slots and make every later lookup walk it. One seed for the
 * wire scan's remembered identifiers (wire-line.ts) and the memory store's message_id tables
 * (message-id-table.ts), so the hash the scan makes of a message_id as it reads it is the
 * table's, and an ingest hashes each ID once.
 */
export const IDENTIFIER_SEED = randomBytes(4).readInt32LE(0)
