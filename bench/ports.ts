/** Every server of the benchmark listens here, and all traffic goes here. */
export const LOOPBACK = '127.0.0.1'

/** A TCP port free on the loopback address at the time of asking (the tests' own helper). */
export { freePort } from '../test/free-port.js'
