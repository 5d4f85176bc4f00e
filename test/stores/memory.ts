import { join } from 'node:path'
import type { StoreProvision } from './store-provision.js'

/** An events file of the test's own, not there yet (the writer creates it). */
const provision: StoreProvision = async (t) => ({ STORE: 'memory', EVENTS_FILE: join(t.testdir(), 'events.ndjson') })

export default provision
