import t from 'tap'
import { preferredCoding } from '../src/http/accept-encoding.js'

t.test('Accept-Encoding: the coding the client ranks highest; brotli on a tie; none when neither is accepted', async (t) => {
  const table: Array<[string | string[] | undefined, 'br' | 'gzip' | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['GZIP', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.4, br;q=0.8', 'br'],
    ['gzip; q=0.9, br ; q=0.9', 'br'],
    ['gzip;Q=0.2, br;q=0.1', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['*', 'br'],
    ['*;q=0.5, gzip', 'gzip'],
    ['*;q=0.5, br;q=0.2', 'gzip'],
    ['*;q=0', undefined],
    ['*;q=0, gzip', 'gzip'],
    ['deflate, compress', undefined],
    [['deflate', 'gzip;q=0.3, br;q=0.1'], 'gzip'],
    // A client that ranks the plain answer above every coding gets it.
    ['identity;q=1, gzip;q=0.5', undefined],
    ['identity;q=0.5, gzip', 'gzip'],
    ['identity;q=0.5, gzip;q=0.5', 'gzip'],
    // A q that is not a number accepts nothing.
    ['gzip;q=abc', undefined],
    ['gzip;q=abc, br;q=0.1', 'br']
  ]
  for (const [header, expected] of table) t.equal(preferredCoding(header), expected, JSON.stringify(header))
})
