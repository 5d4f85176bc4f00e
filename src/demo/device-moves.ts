import { DAY_MS } from './daily-rhythm.js'
import type { Layout } from './site-layout.js'
import type { Random } from './random.js'

export interface DeviceMove {
  epochMs: number
  /** Index into Layout.spaces: where the device is from epochMs on. */
  space: number
}

/** Most moves stay in the building: a dispenser goes to the next restroom, a robot to another floor. */
const SAME_SITE_CHANCE = 0.8

/**
 * When each device is moved to another space during [startMs, endMs), in time order. Planned
 * before any event, so an event's space is known when it is written and the entities file can
 * give each device's space at the end of the period.
 */
export function planMoves (random: Random, layout: Layout, startMs: number, endMs: number, chancePerDay: number): DeviceMove[][] {
  if (chancePerDay <= 0) return layout.devices.map(() => [])
  const plans: DeviceMove[][] = []
  const meanWaitMs = DAY_MS / chancePerDay
  for (const device of layout.devices) {
    const moves: DeviceMove[] = []
    const anywhere = layout.installable.get(device.type)!
    let current = device.space
    let time = startMs + Math.round(random.exponential(meanWaitMs))
    while (time < endMs) {
      const site = layout.spaces[current]!.site
      const sameSite = anywhere.filter((space) => layout.spaces[space]!.site === site)
      const target = random.pick(random.chance(SAME_SITE_CHANCE) ? sameSite : anywhere)
      if (target !== current) {
        moves.push({ epochMs: time, space: target })
        current = target
      }
      time += Math.round(random.exponential(meanWaitMs))
    }
    plans.push(moves)
  }
  return plans
}

/** The space a device is in at epochMs. */
export function spaceAt (homeSpace: number, moves: readonly DeviceMove[], epochMs: number): number {
  let space = homeSpace
  for (const move of moves) {
    if (move.epochMs > epochMs) break
    space = move.space
  }
  return space
}
