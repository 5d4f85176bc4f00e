import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { copyFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { applyCpuPlacement, describeCpuPlacement, type CpuPlacement } from './cpu-placement.js'
import type { Dataset } from './dataset.js'
import type { InfluxStore } from './influx-store.js'
import { influxStatement, measureInfluxIngest, measureMemoryIngest, type IngestComparison } from './ingest-throughput.js'
import { LiveEventSource, liveBaseMs, livePrefix, readLiveEntities, type LiveEntities } from './live-events.js'
import { log } from './log.js'
import { MOSQUITTO, mosquittoAvailable, startMosquitto, type Mosquitto } from './mosquitto.js'
import type { Profile } from './options.js'
import { startProvider } from './provider.js'
import { measurePush, openFilesLimit, waitForBroker, type PushRun } from './push-latency.js'
import { providerRequest, type Scenario } from './scenarios.js'
import { measureSmallBesideIngest, type SmallBesideIngestResult } from './small-beside-ingest.js'

/** The live events measurements: ingest throughput, push latency, small requests beside an ingest. */
export interface LiveResult {
  /** POST /ingest/events against its ceilings, per store. */
  ingest: { memory: IngestComparison, influxdb: IngestComparison }
  smallBesideIngest: SmallBesideIngestResult
  push: {
    /** The events file of the push provider: the data set's first lines. */
    eventsInFile: number
    /** "mosquitto 2.0.11"; undefined when mosquitto is not installed (MQTT not measured). */
    broker: string | undefined
    /** Streams and MQTT at the high rate. */
    fast: PushRun
    /** Many streams at the low rate. */
    many: PushRun
    /** Why `many` has fewer streams than the profile asks for, when it does. */
    note: string | undefined
  }
  /** Where influxd ran during the InfluxDB ingest. */
  influxCpuPlacement: string
}

export interface LiveSetup {
  profile: Profile
  dataset: Dataset
  token: string
  scratch: string
  small: Scenario
  influx: InfluxStore
  placement: CpuPlacement
}

/** The events file of the push provider: small, it only needs to start. */
const PUSH_FILE_EVENTS = 10_000
/** Open files kept free for everything else (the provider's files, the posting connections, the broker). */
const SPARE_FILES = 500

async function firstLines (source: string, count: number, target: string): Promise<number> {
  const out = createWriteStream(target)
  let written = 0
  for await (const line of createInterface({ input: createReadStream(source, { encoding: 'utf8' }), crlfDelay: Infinity })) {
    if (written === count) break
    if (!out.write(line + '\n')) await once(out, 'drain')
    written++
  }
  out.end()
  await once(out, 'finish')
  return written
}

function mosquittoVersion (): string {
  const result = spawnSync(MOSQUITTO, ['-h'], { encoding: 'utf8' })
  return /mosquitto version \S+/.exec(result.stdout + result.stderr)?.[0] ?? 'mosquitto'
}

export async function measureLive (setup: LiveSetup): Promise<LiveResult> {
  const { profile, dataset, token, scratch } = setup
  const entities: LiveEntities = await readLiveEntities(dataset)
  const ingestToken = randomBytes(24).toString('base64url')
  const source = (what: string) => new LiveEventSource(entities, livePrefix(what), liveBaseMs(dataset))

  // Memory store: small requests beside an ingest, then the ingest throughput, on one provider
  // serving a copy of the whole events file (the data set's own file is never written).
  const memoryFile = join(scratch, 'live-memory-events.ndjson')
  log(`live: copying the events file (${dataset.events} events) for the memory-store provider that takes the ingest`)
  await copyFile(dataset.eventsFile, memoryFile)
  let smallBesideIngest: SmallBesideIngestResult
  let memoryIngest: IngestComparison
  try {
    log('live: starting the memory-store provider on the copy')
    const memory = await startProvider({ name: 'memory, ingest', dataset, token, store: 'memory', eventsFile: memoryFile, env: { INGEST_TOKENS: ingestToken } })
    try {
      smallBesideIngest = (await measureSmallBesideIngest(memory, providerRequest(setup.small, memory.url, token), ingestToken, source('beside'), 0, profile, scratch)).result
      memoryIngest = await measureMemoryIngest(memory, ingestToken, source('ingest'), profile, scratch, `a copy of the events file: ${dataset.events.toLocaleString('en-US')} events`)
    } finally {
      await memory.stop()
    }
  } finally {
    await rm(memoryFile, { force: true })
  }

  // InfluxDB: a database of its own beside the data set's (whose files stay as they were), with
  // a measurement for the provider and one for the raw writes, dropped afterwards.
  const database = `live_bench_${Date.now().toString(36)}`
  const measurements = { provider: 'live_ingest', ceiling: 'live_ceiling' }
  const influxTarget = { url: setup.influx.url, database }
  log(`live: InfluxDB ingest into a database of its own (${database}): ${describeCpuPlacement(setup.placement)}`)
  let influxIngest: IngestComparison
  await influxStatement(setup.influx.url, `CREATE DATABASE "${database}"`)
  const unpin = applyCpuPlacement(setup.placement, setup.influx.server.pid())
  try {
    const influxProvider = await startProvider({
      name: 'influxdb, ingest',
      dataset,
      token,
      store: 'influxdb',
      influxUrl: setup.influx.url,
      env: { INGEST_TOKENS: ingestToken, INFLUX_DATABASE: database, INFLUX_MEASUREMENT: measurements.provider }
    })
    try {
      influxIngest = await measureInfluxIngest(influxProvider, ingestToken, source('influx'), profile, influxTarget, measurements)
    } finally {
      await influxProvider.stop()
    }
  } finally {
    unpin()
    await influxStatement(setup.influx.url, `DROP DATABASE "${database}"`).catch((error: Error) => log(`live: ${error.message}`))
  }

  // Push: one memory-store provider with MQTT, the subscribers in a process of their own.
  const live = profile.live
  let streams = live.manySubscribers
  let note: string | undefined
  const limit = openFilesLimit()
  if (streams + SPARE_FILES > limit) {
    streams = Math.max(0, limit - SPARE_FILES)
    note = `${streams} streams, not ${live.manySubscribers}: this machine allows ${limit} open files per process`
    log(`live: ${note}`)
  }
  let broker: Mosquitto | undefined
  let brokerName: string | undefined
  if (mosquittoAvailable()) {
    broker = await startMosquitto(scratch)
    brokerName = mosquittoVersion()
  } else {
    log(`live: ${MOSQUITTO} is not installed (apt-get install mosquitto): push latency without MQTT`)
  }
  const pushFile = join(scratch, 'live-push-events.ndjson')
  try {
    const eventsInFile = await firstLines(dataset.eventsFile, PUSH_FILE_EVENTS, pushFile)
    const env: Record<string, string> = {
      INGEST_TOKENS: ingestToken,
      MAX_CONNECTIONS: String(Math.max(streams, live.pushSubscribers) + 2000),
      STREAM_MAX_CLIENTS: String(Math.max(streams, live.pushSubscribers) + 1000)
    }
    if (broker !== undefined) env.MQTT_URL = broker.url
    log(`live: starting a memory-store provider for the push latency (${eventsInFile} events${broker === undefined ? '' : ', MQTT_URL to mosquitto'})`)
    const provider = await startProvider({ name: 'memory, push', dataset, token, store: 'memory', eventsFile: pushFile, env })
    try {
      if (broker !== undefined) await waitForBroker(provider)
      const durationSec = profile.rounds * profile.durationSec
      const common = { provider, token, ingestToken, durationSec, rssSampleMs: profile.rssSampleMs }
      const fast = await measurePush({
        ...common,
        source: source('push'),
        streams: live.pushSubscribers,
        mqttUrl: broker?.url,
        ratePerSec: live.pushRate,
        perPost: live.pushPerPost
      }, `push/${live.pushSubscribers} streams${broker === undefined ? '' : ' + MQTT'}`)
      const many = await measurePush({
        ...common,
        source: source('push-many'),
        streams,
        mqttUrl: undefined,
        ratePerSec: live.manyRate,
        perPost: live.manyPerPost
      }, `push/${streams} streams`)
      return {
        ingest: { memory: memoryIngest, influxdb: influxIngest },
        smallBesideIngest,
        push: { eventsInFile, broker: brokerName, fast, many, note },
        influxCpuPlacement: describeCpuPlacement(setup.placement)
      }
    } finally {
      await provider.stop()
    }
  } finally {
    await broker?.stop()
    await rm(pushFile, { force: true })
  }
}
