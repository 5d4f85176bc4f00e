import { createSecureContext } from 'node:tls'
import { ConfigError } from '../config-error.js'
import { readRegularFileSync } from '../data/regular-file.js'

/** The PEM files of TLS_CERT_FILE and TLS_KEY_FILE, read. */
export interface CertificatePair {
  certFile: string
  keyFile: string
  /** The certificate, then its chain. */
  cert: Buffer
  key: Buffer
}

/**
 * Reads TLS_CERT_FILE and TLS_KEY_FILE and checks they are a certificate and its private key;
 * a ConfigError naming the variable and file otherwise (at start-up, and for a reload's log).
 */
export function readCertificatePair (certFile: string, keyFile: string): CertificatePair {
  const read = (name: string, file: string): Buffer => {
    try {
      return readRegularFileSync(file)
    } catch (error) {
      throw new ConfigError(`${name} names ${file}, which cannot be read: ${(error as Error).message}`)
    }
  }
  const pair = { certFile, keyFile, cert: read('TLS_CERT_FILE', certFile), key: read('TLS_KEY_FILE', keyFile) }
  try {
    createSecureContext({ cert: pair.cert, key: pair.key })
  } catch (error) {
    throw new ConfigError(`TLS_CERT_FILE (${certFile}) and TLS_KEY_FILE (${keyFile}) must be a PEM certificate and its private key: ${(error as Error).message}`)
  }
  return pair
}
