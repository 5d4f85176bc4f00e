import { alternate, type Contender } from './alternate.js'
import { capture, countEvents, type Captured } from './capture.js'
import { replayedHeaders, type FrameworkCeiling } from './ceiling.js'
import { checkLarge, type CeilingRequests, type LargeChecks } from './large-checks.js'
import type { LoadOptions, LoadRequest } from './load.js'
import { log } from './log.js'
import type { Profile } from './options.js'
import type { Provider } from './provider.js'
import { countRawRows, rawInfluxRequest } from './raw-influx.js'
import { RssSampler } from './rss.js'
import { providerRequest, type Scenario, type StoreName } from './scenarios.js'
import { ratioOf, summarise, type Metrics, type Ratio } from './stats.js'

const MB = 1024 * 1024

export interface RssResult {
  startMB: number
  peakMB: number
  /** peak - start. */
  growthMB: number
  /** At the end of the scenario: what stayed after the peak. */
  endMB: number
  samples: number
}

/** One scenario on one store, with its ceilings measured in the same run, in turns with it. */
export interface ScenarioResult {
  scenario: Scenario['name']
  store: StoreName
  description: string
  request: { method: string, path: string, badToken: boolean }
  /** Of every measurement of this row (the small requests beside the large ones use the profile's). */
  load: LoadOptions
  expectedStatus: number
  /** One answer of the provider: its size, and how many events it held (events scenarios). */
  response: { status: number, bytes: number, events: number | undefined, contentType: string }
  provider: Metrics
  frameworkCeiling: Metrics
  /** The raw InfluxDB query (InfluxDB scenarios). */
  storeCeiling?: Metrics & { rowsInOneResponse: number }
  ratios: { framework: Ratio, store?: Ratio }
  /** The provider's process tree over the whole scenario (warm-up and ceilings' turns included). */
  rss: RssResult
  large?: LargeChecks
}

export interface ScenarioSetup {
  profile: Profile
  provider: Provider
  store: StoreName
  token: string
  ceiling: FrameworkCeiling
  /** For the raw query (InfluxDB store). */
  influx?: { url: string, database: string, measurement: string }
  /** The small scenario, measured beside the large one. */
  small: Scenario
}

/**
 * Serves the provider's answer on the framework ceiling, to every URL or to this scenario's URL
 * only, and checks that the ceiling serves exactly its bytes: the ceiling's request.
 */
async function replayOnCeiling (ceiling: FrameworkCeiling, request: LoadRequest, path: string, answer: Captured, where: 'every URL' | 'this URL', context: string): Promise<LoadRequest> {
  const reply = { status: answer.status, contentType: String(answer.headers['content-type'] ?? 'application/json'), body: answer.body, headers: replayedHeaders(answer.headers) }
  if (where === 'every URL') await ceiling.serve(reply)
  else await ceiling.serveAt(path, reply)
  const ceilingRequest: LoadRequest = { ...request, url: ceiling.url + path }
  const served = await capture(ceilingRequest)
  if (served.status !== answer.status || !served.body.equals(answer.body)) throw new Error(`${context}: the framework ceiling does not serve the provider's bytes`)
  return ceilingRequest
}

/**
 * The framework ceiling's requests for the large answers' check: it serves the large answer
 * already (the scenario's own), and the small scenario's answer, as the provider gives it, at the
 * small scenario's URL.
 */
async function ceilingBesideLarge (setup: ScenarioSetup, ceilingLarge: LoadRequest): Promise<CeilingRequests> {
  const small = providerRequest(setup.small, setup.provider.url, setup.token)
  const answer = await capture(small)
  if (answer.status !== 200) throw new Error(`large: the provider answered the small scenario's request ${answer.status}`)
  return { large: ceilingLarge, small: await replayOnCeiling(setup.ceiling, small, setup.small.path, answer, 'this URL', 'large, the small scenario') }
}

/** The connections and round length of a scenario (the large one has its own). */
export function loadOptionsOf (scenario: Scenario, profile: Profile): LoadOptions {
  return scenario.name === 'large'
    ? { connections: profile.large.connections, durationSec: profile.large.durationSec }
    : { connections: profile.connections, durationSec: profile.durationSec }
}

/**
 * The memory store's scenarios but the large one are measured in slices of a second (alternate):
 * their answers take a few milliseconds at most (a slice's answers still in flight at its end
 * are not counted). The InfluxDB ones (answers of up to seconds) and the large one, in whole
 * rounds.
 */
export const SLICE_SEC = 1
function sliceSecOf (scenario: Scenario, store: 'memory' | 'influxdb'): number | undefined {
  return store === 'memory' && scenario.name !== 'large' ? SLICE_SEC : undefined
}

export async function measureScenario (scenario: Scenario, setup: ScenarioSetup): Promise<ScenarioResult> {
  const { profile, provider, store, token, ceiling } = setup
  const context = `${scenario.name}/${store}`
  const request = providerRequest(scenario, provider.url, token)
  const answer = await capture(request)
  if (answer.status !== scenario.expectedStatus) {
    throw new Error(`${context}: the provider answered ${answer.status}, not ${scenario.expectedStatus}: ${answer.body.subarray(0, 300).toString()}`)
  }
  const contentType = String(answer.headers['content-type'] ?? 'application/json')
  const events = scenario.expectedStatus === 200 ? countEvents(answer.body) : undefined
  const ceilingRequest = await replayOnCeiling(ceiling, request, scenario.path, answer, 'every URL', context)

  const contenders: Contender[] = [
    { label: 'provider', request },
    { label: 'framework ceiling', request: ceilingRequest }
  ]
  let rowsInOneResponse = 0
  if (setup.influx !== undefined && scenario.query !== undefined) {
    const raw = rawInfluxRequest(setup.influx.url, setup.influx.database, setup.influx.measurement, scenario.query)
    rowsInOneResponse = await countRawRows(raw)
    if (events !== undefined && rowsInOneResponse !== events) {
      log(`${context}: note: the raw query returns ${rowsInOneResponse} rows, the provider ${events} events`)
    }
    contenders.push({ label: 'raw InfluxDB query', request: raw })
  }

  log(`${context}: ${scenario.description}; ${answer.body.length} bytes per answer`)
  const sampler = new RssSampler(provider.pid, profile.rssSampleMs)
  try {
    await sampler.reset()
    const samples = await alternate(contenders, profile, context, loadOptionsOf(scenario, profile), sliceSecOf(scenario, store))
    const large = scenario.name === 'large'
      ? await checkLarge(request, providerRequest(setup.small, provider.url, token), profile, context,
        store === 'memory' ? await ceilingBesideLarge(setup, ceilingRequest) : undefined)
      : undefined
    const reading = await sampler.read()
    const providerMetrics = summarise(samples[0]!, scenario.expectedStatus)
    const frameworkCeiling = summarise(samples[1]!, scenario.expectedStatus)
    const storeCeiling = samples[2] === undefined ? undefined : { ...summarise(samples[2], 200), rowsInOneResponse }
    return {
      scenario: scenario.name,
      store,
      description: scenario.description,
      request: { method: 'GET', path: scenario.path, badToken: scenario.badToken },
      load: loadOptionsOf(scenario, profile),
      expectedStatus: scenario.expectedStatus,
      response: { status: answer.status, bytes: answer.body.length, events, contentType },
      provider: providerMetrics,
      frameworkCeiling,
      ...(storeCeiling === undefined ? {} : { storeCeiling }),
      ratios: {
        framework: ratioOf(providerMetrics, frameworkCeiling),
        ...(storeCeiling === undefined ? {} : { store: ratioOf(providerMetrics, storeCeiling) })
      },
      rss: {
        startMB: reading.startBytes / MB,
        peakMB: reading.peakBytes / MB,
        growthMB: (reading.peakBytes - reading.startBytes) / MB,
        endMB: reading.lastBytes / MB,
        samples: reading.samples
      },
      ...(large === undefined ? {} : { large })
    }
  } finally {
    await sampler.stop()
  }
}
