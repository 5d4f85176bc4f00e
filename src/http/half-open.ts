import type { Server } from 'node:http'

/**
 * A client may half-close (FIN) once its requests are sent, and read the answers after. By
 * default Node ends the connection as soon as it reads the FIN, and an answer not yet written is
 * lost: answers are held for the end of their batch (plugins/batched-writes.ts), so this would
 * lose even a lone request's. Allowed half-open, Node ends the connection after the last answer
 * owed. A client that closed for good makes the connection fail at the first answer written to
 * it (its RST). A property of http.Server since Node's first versions, with no option to set it.
 */
export function keepHalfOpenConnections (server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
}
