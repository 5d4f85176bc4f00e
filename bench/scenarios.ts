import type { EventQuery } from '../src/store/event-store.js'
import { DAY_MS, type Dataset } from './dataset.js'
import type { LoadRequest } from './load.js'

export type ScenarioName = 'small' | 'medium' | 'large' | 'lookup' | 'specifications' | 'rejected' | 'unauthorised'
export type StoreName = 'memory' | 'influxdb'

/** One fixed, realistic request, measured against the provider on each of its stores. */
export interface Scenario {
  name: ScenarioName
  description: string
  /** Path and query string. */
  path: string
  /** Sent with a token the provider does not accept. */
  badToken: boolean
  expectedStatus: number
  /** small/medium/large use the store; the others never reach it, so they run on memory only. */
  stores: StoreName[]
  /** What the provider asks its store (build-event-query.ts's shape), for the raw InfluxDB ceiling. */
  query: EventQuery | undefined
}

const iso = (ms: number) => new Date(ms).toISOString()

function eventsPath (startMs: number, endMs: number, extra: Record<string, string>): string {
  const parameters = new URLSearchParams({ start_date: iso(startMs), end_date: iso(endMs), ...extra })
  return `/svc/v2/events?${parameters}`
}

/** Every event of the data set's last 365 days: what the pipelined attack asks for, 500 times per connection. */
export function yearPath (dataset: Dataset): string {
  return eventsPath(dataset.endMs - 365 * DAY_MS, dataset.endMs, {})
}

export function buildScenarios (dataset: Dataset): Scenario[] {
  const { endMs, picks } = dataset
  const last30 = endMs - 30 * DAY_MS
  const last90 = endMs - 90 * DAY_MS
  const small = eventsPath(last30, endMs, { device_ids: picks.device.id })
  const lookupStart = endMs - (dataset.size.days + 1) * DAY_MS
  return [
    {
      name: 'small',
      description: `one device (${picks.device.id}), last 30 days: ${picks.device.eventsLast30Days} events`,
      path: small,
      badToken: false,
      expectedStatus: 200,
      stores: ['memory', 'influxdb'],
      query: { startMs: last30, endMs, entities: { deviceIds: new Set([picks.device.id]), spaceIds: new Set() } }
    },
    {
      name: 'medium',
      description: `one space (${picks.space.id}, the busiest), last 90 days: ${picks.space.eventsLast90Days} events`,
      path: eventsPath(last90, endMs, { space_ids: picks.space.id }),
      badToken: false,
      expectedStatus: 200,
      stores: ['memory', 'influxdb'],
      query: { startMs: last90, endMs, entities: { deviceIds: new Set(), spaceIds: new Set([picks.space.id]) } }
    },
    {
      name: 'large',
      description: `every event of the last 30 days: ${picks.eventsLast30Days} events`,
      path: eventsPath(last30, endMs, {}),
      badToken: false,
      expectedStatus: 200,
      stores: ['memory', 'influxdb'],
      query: { startMs: last30, endMs, entities: undefined }
    },
    {
      name: 'lookup',
      description: `${picks.messageIds.length} message_ids spread over the whole data set, a window of ${dataset.size.days + 1} days`,
      path: eventsPath(lookupStart, endMs, { message_ids: picks.messageIds.join(',') }),
      badToken: false,
      expectedStatus: 200,
      stores: ['memory', 'influxdb'],
      query: { startMs: lookupStart, endMs, entities: undefined, messageIds: new Set(picks.messageIds) }
    },
    {
      name: 'specifications',
      description: `every code, languages=${picks.languages.join(',')}`,
      path: `/svc/v2/event_specifications?languages=${picks.languages.join(',')}`,
      badToken: false,
      expectedStatus: 200,
      stores: ['memory'],
      query: undefined
    },
    {
      name: 'rejected',
      description: 'an unknown parameter: 400 invalid_parameter',
      path: eventsPath(last30, endMs, { colour: 'blue' }),
      badToken: false,
      expectedStatus: 400,
      stores: ['memory'],
      query: undefined
    },
    {
      name: 'unauthorised',
      description: 'the small request with a wrong token: 401',
      path: small,
      badToken: true,
      expectedStatus: 401,
      stores: ['memory'],
      query: undefined
    }
  ]
}

export const BAD_TOKEN = 'not-the-benchmark-token'

export function providerRequest (scenario: Scenario, baseUrl: string, token: string): LoadRequest {
  return {
    url: baseUrl + scenario.path,
    headers: { authorization: `Bearer ${scenario.badToken ? BAD_TOKEN : token}` }
  }
}
