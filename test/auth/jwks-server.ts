import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'

interface Teardown {
  teardown (fn: () => unknown): void
}

export interface SigningKey {
  kid: string
  alg: 'RS256' | 'ES256'
  privateKey: CryptoKey
  jwk: JWK
}

/**
 * A real HTTP server serving a JSON Web Key Set, as an identity provider's jwks_uri does, with
 * the keys it holds now (add one to rotate), and counting how often it was fetched.
 */
export interface JwksServer {
  url: string
  fetches: number
  keys: SigningKey[]
  /** 'fail': 500 to every fetch; 'huge': a body of 64 MiB, sent as fast as it is read. */
  mode: 'normal' | 'fail' | 'huge'
  /** Bytes of 'huge' bodies written so far. */
  readonly hugeBytesSent: number
  addKey (alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey>
  sign (key: SigningKey, claims: JWTPayload, options?: { issuer?: string, audience?: string, expiresIn?: string | number }): Promise<string>
}

export async function startJwksServer (t: Teardown): Promise<JwksServer> {
  const keys: SigningKey[] = []
  const state = { fetches: 0, mode: 'normal' as JwksServer['mode'], hugeBytesSent: 0 }
  const server: Server = createServer((request, response) => {
    state.fetches++
    if (state.mode === 'fail') {
      response.writeHead(500, { 'content-type': 'text/plain' })
      response.end('down')
      return
    }
    if (state.mode === 'huge') {
      response.writeHead(200, { 'content-type': 'application/json' })
      const chunk = Buffer.alloc(64 * 1024, ' ')
      let left = 1024
      const pump = () => {
        while (left > 0 && !response.destroyed) {
          left--
          state.hugeBytesSent += chunk.length
          if (!response.write(chunk)) return
        }
        if (left === 0) response.end()
      }
      response.on('drain', pump)
      response.write('{"keys":[')
      pump()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ keys: keys.map((key) => key.jwk) }))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get fetches () { return state.fetches },
    get mode () { return state.mode },
    set mode (mode) { state.mode = mode },
    get hugeBytesSent () { return state.hugeBytesSent },
    keys,
    async addKey (alg, kid) {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
      const jwk = { ...await exportJWK(publicKey), kid, alg, use: 'sig' }
      const key = { kid, alg, privateKey, jwk }
      keys.push(key)
      return key
    },
    async sign (key, claims, options = {}) {
      return await new SignJWT(claims)
        .setProtectedHeader({ alg: key.alg, kid: key.kid })
        .setIssuedAt()
        .setIssuer(options.issuer ?? 'https://idp.test')
        .setAudience(options.audience ?? 'events-provider')
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(key.privateKey)
    }
  }
}
