/**
 * Beyond this many entities an OR chain costs InfluxDB more than it saves, in either dialect:
 * the time range is pushed down alone and the entities are checked as rows arrive (above the
 * store, by the shared contract).
 */
export const MAX_PUSHED_ENTITIES = 500
