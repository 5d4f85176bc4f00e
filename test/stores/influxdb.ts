import { influxSkipReason, influxTestEnv, testInfluxServer } from '../influx/influx-server.js'
import type { StoreProvision } from './store-provision.js'

/** A real influxd of the test's own (or INFLUX_URL's server), with a measurement of its own. */
const provision: StoreProvision = async (t) => {
  const skip = influxSkipReason()
  if (skip !== false) return { skip }
  const server = await testInfluxServer()
  t.teardown(() => server.destroy())
  return influxTestEnv(server, 'contract')
}

export default provision
