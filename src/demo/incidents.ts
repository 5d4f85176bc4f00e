import type { MessageCatalog } from './catalog.js'
import type { Rhythm } from './daily-rhythm.js'
import type { DeviceFamily, DeviceTypeKey } from './device-types.js'
import type { Random } from './random.js'

/**
 * An incident is a short story an entity tells in events: a refill running low, then empty, then
 * refilled; a device going offline, then back online. Each entity has one incident at a time per
 * channel, so its states alternate plausibly, while unrelated stories (a battery running down while
 * the refill runs low) may overlap.
 */
export const CHANNELS = ['supply', 'power', 'link', 'fault', 'usage', 'service'] as const
export type Channel = typeof CHANNELS[number]

export type EntityKind = DeviceTypeKey | 'space'

/** A code, or any of the numbered fault codes of a device family. */
type CodeSource = string | { faultsOf: DeviceFamily }

interface StepTemplate {
  source: CodeSource
  /** Each later step happens with this chance; a step that does not happen is skipped, not the rest. */
  chance: number
  /** Minutes after the previous event. */
  after: readonly [min: number, max: number]
}

interface IncidentTemplate {
  weight: number
  channel: Channel
  steps: readonly StepTemplate[]
}

const HOURS = 60
const DAYS = 24 * HOURS

const opens = (source: CodeSource): StepTemplate => ({ source, chance: 1, after: [0, 0] })
const then = (source: CodeSource, chance: number, min: number, max: number): StepTemplate => ({ source, chance, after: [min, max] })
const incident = (weight: number, channel: Channel, ...steps: StepTemplate[]): IncidentTemplate => ({ weight, channel, steps })

const battery = incident(6, 'power', opens('DEV_BATTERY_LOW'), then('DEV_BATTERY_CRITICAL', 0.35, 1 * DAYS, 12 * DAYS), then('DEV_BATTERY_REPLACED', 0.95, 30, 2 * DAYS))
const connectivity = incident(10, 'link', opens('DEV_OFFLINE'), then('DEV_ONLINE', 0.97, 3, 20 * HOURS))
const tampering = incident(1.5, 'service', opens('DEV_TAMPER_DETECTED'))
const firmware = incident(2, 'service', opens('DEV_FIRMWARE_UPDATED'))
const familyFault = (family: DeviceFamily, weight: number) =>
  incident(weight, 'fault', opens({ faultsOf: family }), then('DEV_FAULT_CLEARED', 0.9, 10, 1 * DAYS))

const dispenser: readonly IncidentTemplate[] = [
  incident(55, 'supply', opens('DISP_LOW_LEVEL'), then('DISP_EMPTY', 0.45, 2 * HOURS, 3 * DAYS), then('DISP_REFILLED', 0.96, 10, 8 * HOURS)),
  incident(4, 'service', opens('DISP_COVER_OPEN'), then('DISP_COVER_CLOSED', 0.97, 5, 3 * HOURS)),
  battery, connectivity, tampering, firmware, familyFault('dispenser', 6)
]
const paperJam = incident(8, 'fault', opens('DISP_JAMMED'), then('DEV_FAULT_CLEARED', 0.92, 10, 6 * HOURS))

const cleaningMachine: readonly IncidentTemplate[] = [
  incident(60, 'usage', opens('CM_CLEANING_STARTED'), then('CM_CLEANING_COMPLETED', 0.93, 20, 3 * HOURS)),
  incident(6, 'fault', opens('CM_BRUSH_BLOCKED'), then('DEV_FAULT_CLEARED', 0.9, 10, 1 * DAYS)),
  connectivity, firmware, familyFault('cleaning-machine', 8)
]
/** A run interrupted by a tank or bin that needs emptying. */
const interruptedRun = (weight: number, code: string) => incident(weight, 'usage',
  opens('CM_CLEANING_STARTED'), then(code, 1, 10, 1 * HOURS), then('CM_CLEANING_COMPLETED', 0.85, 15, 2 * HOURS))

const TEMPLATES: Readonly<Record<EntityKind, readonly IncidentTemplate[]>> = {
  soap: [
    ...dispenser,
    incident(6, 'fault', opens('SOAP_NOZZLE_BLOCKED'), then('DEV_FAULT_CLEARED', 0.9, 15, 1 * DAYS)),
    incident(2, 'supply', opens('SOAP_WRONG_REFILL'), then('DISP_REFILLED', 0.9, 5, 4 * HOURS))
  ],
  towel: [...dispenser, paperJam],
  'toilet-paper': [...dispenser, paperJam],
  'people-counter': [
    incident(60, 'usage', opens('PC_THRESHOLD_EXCEEDED'), then('PC_COUNT_RESET', 0.85, 20, 4 * HOURS)),
    incident(8, 'fault', opens('PC_SENSOR_BLOCKED'), then('DEV_FAULT_CLEARED', 0.9, 30, 2 * DAYS)),
    battery, connectivity, tampering, firmware, familyFault('people-counter', 6)
  ],
  scrubber: [
    ...cleaningMachine,
    interruptedRun(6, 'CM_WATER_TANK_EMPTY'),
    interruptedRun(5, 'CM_DIRTY_WATER_FULL')
  ],
  'robot-vacuum': [
    ...cleaningMachine,
    interruptedRun(6, 'CM_DUSTBIN_FULL'),
    incident(8, 'usage', opens('CM_CLEANING_STARTED'), then('CM_STUCK', 1, 5, 1 * HOURS),
      then('DEV_FAULT_CLEARED', 0.9, 10, 4 * HOURS), then('CM_CLEANING_COMPLETED', 0.7, 10, 1 * HOURS))
  ],
  space: [
    incident(45, 'service', opens('SPACE_CLEANING_DUE'), then('SPACE_CLEANING_OVERDUE', 0.25, 1 * HOURS, 4 * HOURS), then('SPACE_CLEANED', 0.95, 10, 3 * HOURS)),
    incident(30, 'usage', opens('SPACE_OCCUPANCY_HIGH')),
    incident(12, 'fault', opens('SPACE_COMPLAINT_REPORTED'), then('SPACE_COMPLAINT_RESOLVED', 0.9, 15, 1 * DAYS))
  ]
}

export const RHYTHM_OF: Readonly<Record<EntityKind, Rhythm>> = {
  soap: 'office',
  towel: 'office',
  'toilet-paper': 'office',
  'people-counter': 'office',
  scrubber: 'cleaning',
  'robot-vacuum': 'cleaning',
  space: 'office'
}

export interface Step {
  codes: readonly string[]
  chance: number
  minDelayMs: number
  maxDelayMs: number
}

export interface Incident {
  /** Index into CHANNELS. */
  channel: number
  steps: readonly Step[]
}

export interface IncidentPlan {
  incidents: readonly Incident[]
  /** Running totals of the incidents' weights, for Random.weighted. */
  cumulativeWeights: readonly number[]
  /** Events one incident gives on average; the incident rate is the event rate divided by it. */
  meanEvents: number
}

/**
 * The incidents an entity kind can have with this catalog: steps whose codes are not in it are
 * left out, and incidents whose opening code is not in it are left out whole.
 */
export function planIncidents (kind: EntityKind, catalog: MessageCatalog): IncidentPlan {
  const codesOf = (source: CodeSource): string[] => typeof source === 'string'
    ? (catalog.categoryOf.has(source) ? [source] : [])
    : [...catalog.faultCodes.get(source.faultsOf) ?? []]
  const incidents: Incident[] = []
  const cumulativeWeights: number[] = []
  let totalWeight = 0
  let weightedEvents = 0
  for (const template of TEMPLATES[kind]) {
    const steps = template.steps
      .map((step) => ({ codes: codesOf(step.source), chance: step.chance, minDelayMs: step.after[0] * 60_000, maxDelayMs: step.after[1] * 60_000 }))
      .filter((step, index) => step.codes.length > 0 || index === 0)
    if (steps[0]!.codes.length === 0) continue
    incidents.push({ channel: CHANNELS.indexOf(template.channel), steps })
    totalWeight += template.weight
    cumulativeWeights.push(totalWeight)
    weightedEvents += template.weight * steps.reduce((sum, step) => sum + step.chance, 0)
  }
  return { incidents, cumulativeWeights, meanEvents: totalWeight === 0 ? 0 : weightedEvents / totalWeight }
}

/** Plays an incident from its first event at startMs; returns the time of its last event. */
export function unfoldIncident (
  incident: Incident, startMs: number, random: Random, emit: (epochMs: number, code: string) => void
): number {
  let time = startMs
  incident.steps.forEach((step, index) => {
    if (index > 0) {
      if (!random.chance(step.chance)) return
      time += Math.round(random.logUniform(step.minDelayMs, step.maxDelayMs))
    }
    emit(time, step.codes.length === 1 ? step.codes[0]! : random.pick(step.codes))
  })
  return time
}

/** Every code some entity kind can emit with this catalog (a test checks the catalog holds no others). */
export function emittableCodes (catalog: MessageCatalog): Set<string> {
  const codes = new Set<string>()
  for (const kind of Object.keys(TEMPLATES) as EntityKind[]) {
    for (const incident of planIncidents(kind, catalog).incidents) {
      for (const step of incident.steps) for (const code of step.codes) codes.add(code)
    }
  }
  return codes
}
