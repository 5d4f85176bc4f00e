import type { Server } from 'node:https'
import fp from 'fastify-plugin'
import { readCertificatePair, type CertificatePair } from '../src/http/certificate-pair.js'
import { reloadableFile, type ReloadableFile } from '../src/data/reloadable-file.js'

export interface TlsCertificatesOptions {
  /** TLS_CERT_FILE and TLS_KEY_FILE as read at start-up; undefined: plain HTTP, nothing to do. */
  tls: CertificatePair | undefined
}

/**
 * A renewed certificate is taken while serving, like the registry: on SIGHUP, and when either
 * file changes on disk, the pair is read again and, once the two match, new connections get it
 * (those open keep theirs). A pair that does not load (a renewal half written: the new
 * certificate beside the old key) keeps the current one in service, logged; the second file's
 * change then loads the pair.
 */
export default fp<TlsCertificatesOptions>(async function tlsCertificates (fastify, options) {
  const { tls } = options
  if (tls === undefined) return
  const load = async () => readCertificatePair(tls.certFile, tls.keyFile)
  const onReload = (pair: CertificatePair) => { (fastify.server as Server).setSecureContext({ cert: pair.cert, key: pair.key }) }
  const files: Array<ReloadableFile<CertificatePair>> = []
  for (const file of [tls.certFile, tls.keyFile]) {
    files.push(await reloadableFile(file, load, () => ({}), fastify.log, onReload))
  }
  fastify.addHook('onClose', async () => { for (const file of files) file.close() })
}, { name: 'tls-certificates', fastify: '5.x' })
