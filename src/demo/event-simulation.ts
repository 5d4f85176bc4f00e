import type { MessageCatalog } from './catalog.js'
import { ChunkWriter } from './chunk-writer.js'
import { DAY_MS, HOUR_MS, dayFactor, momentInDay, type Rhythm } from './daily-rhythm.js'
import { spaceAt, type DeviceMove } from './device-moves.js'
import { CHANNELS, RHYTHM_OF, planIncidents, unfoldIncident, type EntityKind, type IncidentPlan } from './incidents.js'
import type { Random } from './random.js'
import type { Layout } from './site-layout.js'

export interface EventWorld {
  catalog: MessageCatalog
  layout: Layout
  moves: readonly (readonly DeviceMove[])[]
  startMs: number
  days: number
  /** Average events per entity per day. */
  rate: number
  /**
   * XORed into every drawn message_id, which is then a UUID version 7 of the event's instant
   * (Random.uuid7); see messageIdKey in generate-dataset.ts. Undefined: the bundled demo's
   * unkeyed version 4 IDs (Random.uuid), which it keeps.
   */
  idKey?: readonly number[] | undefined
}

/** A device or a space, as the simulation sees it. */
interface Actor {
  plan: IncidentPlan
  /** Incidents per average day. */
  incidentRate: number
  rhythm: Rhythm
  utcOffsetHours: number
  /** Index into layout.devices; undefined for a space. */
  device: number | undefined
  /** For a space, itself; for a device, where it starts. */
  space: number
}

interface PendingEvent {
  epochMs: number
  id: string
  actor: number
  code: string
}

/** An incident that would start while the last one on its channel is still going on waits this long after it. */
const DEFER_MIN_MS = 10 * 60_000
const DEFER_MAX_MS = 6 * HOUR_MS

/**
 * Simulates the period day by day and writes the events to an NDJSON file in (date_time,
 * message_id) order. Memory holds one day's events and the later events of incidents still going
 * on, never the whole period. Returns how many events were written.
 */
export async function writeEventsFile (file: string, world: EventWorld, random: Random): Promise<number> {
  const { catalog, layout, moves, startMs, days, rate, idKey } = world
  const endMs = startMs + days * DAY_MS
  const plans = new Map<string, IncidentPlan>()
  const planOf = (kind: EntityKind) => {
    let plan = plans.get(kind)
    if (plan === undefined) plans.set(kind, plan = planIncidents(kind, catalog))
    return plan
  }
  const actor = (kind: EntityKind, space: number, device: number | undefined): Actor => {
    const plan = planOf(kind)
    return {
      plan,
      incidentRate: plan.meanEvents === 0 ? 0 : rate / plan.meanEvents,
      rhythm: RHYTHM_OF[kind],
      utcOffsetHours: layout.spaces[space]!.site.utcOffsetHours,
      device,
      space
    }
  }
  const actors: Actor[] = [
    ...layout.devices.map((device, index) => actor(device.type.key, device.space, index)),
    ...layout.spaces.map((_, index) => actor('space', index, undefined))
  ]

  // The JSON text of every ID and code, escaped once rather than per event.
  const deviceJson = layout.devices.map((device) => JSON.stringify(device.id))
  const spaceJson = layout.spaces.map((space) => JSON.stringify(space.id))
  const codeJson = new Map(catalog.specifications.map((specification) => [
    specification.message_code,
    `"message_code":${JSON.stringify(specification.message_code)},"message_category":"${specification.message_category}"`
  ]))

  // When the last event of each actor's current incident on each channel happens.
  const busyUntil = new Float64Array(actors.length * CHANNELS.length).fill(-Infinity)
  // Events by the day they fall on, until that day is written.
  const byDay = new Map<number, PendingEvent[]>()
  const writer = new ChunkWriter(file)
  let written = 0
  try {
    for (let day = 0; day < days; day++) {
      const dayStartMs = startMs + day * DAY_MS
      const factor = dayFactor(dayStartMs)
      actors.forEach((entity, index) => {
        const count = random.poisson(entity.incidentRate * factor)
        for (let n = 0; n < count; n++) {
          const incident = entity.plan.incidents[random.weighted(entity.plan.cumulativeWeights)]!
          const slot = index * CHANNELS.length + incident.channel
          let start = momentInDay(random, entity.rhythm, dayStartMs, entity.utcOffsetHours)
          if (start <= busyUntil[slot]!) start = busyUntil[slot]! + Math.round(random.logUniform(DEFER_MIN_MS, DEFER_MAX_MS))
          busyUntil[slot] = unfoldIncident(incident, start, random, (epochMs, code) => {
            if (epochMs >= endMs) return
            const event = { epochMs, id: idKey === undefined ? random.uuid() : random.uuid7(epochMs, idKey), actor: index, code }
            const eventDay = Math.floor((epochMs - startMs) / DAY_MS)
            const list = byDay.get(eventDay)
            if (list === undefined) byDay.set(eventDay, [event])
            else list.push(event)
          })
        }
      })

      // No later day can add to this one: every incident starts on its own day or later.
      const events = byDay.get(day) ?? []
      byDay.delete(day)
      events.sort((a, b) => a.epochMs - b.epochMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      const lines = events.map((event) => {
        const entity = actors[event.actor]!
        const device = entity.device
        const space = device === undefined ? entity.space : spaceAt(entity.space, moves[device]!, event.epochMs)
        return `{"message_id":"${event.id}",${codeJson.get(event.code)!},"date_time":"${new Date(event.epochMs).toISOString()}",` +
          (device === undefined ? '' : `"device_id":${deviceJson[device]!},`) +
          `"space_id":${spaceJson[space]!}}\n`
      })
      if (lines.length > 0) await writer.write(lines.join(''))
      written += lines.length
    }
  } finally {
    await writer.close()
  }
  return written
}
