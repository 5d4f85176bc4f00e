import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface TestCertificate {
  certFile: string
  keyFile: string
  /** The certificate's PEM, for a client to trust it. */
  cert: Buffer
}

/**
 * In CI the TLS tests are mandatory: a missing openssl (which makes their certificates) fails the
 * run instead of skipping. Elsewhere they are skipped with the reason.
 */
export function opensslSkipReason (): string | false {
  if (spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0) return false
  if (process.env.CI === 'true') throw new Error('openssl is not installed, and CI requires the TLS tests (apt-get install openssl)')
  return 'openssl is not installed (apt-get install openssl)'
}

/** A new self-signed certificate for localhost and 127.0.0.1 (P-256), made by openssl in `dir`. */
export function selfSignedCertificate (dir: string, name = 'server'): TestCertificate {
  const certFile = join(dir, `${name}.crt`)
  const keyFile = join(dir, `${name}.key`)
  const made = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'
  ], { encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`)
  return { certFile, keyFile, cert: readFileSync(certFile) }
}
