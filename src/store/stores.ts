import { influxStore } from './influx/index.js'
import { memoryStore } from './memory/index.js'

/**
 * Every store the provider can run on; STORE names one. Adding a store is a folder
 * `src/store/<name>/` whose index.ts exports its descriptor, and one line here.
 */
export const storeDescriptors = [memoryStore, influxStore] as const
