import { DEVICE_TYPES, type DeviceType } from './device-types.js'
import type { Random } from './random.js'
import { GROUND_FLOOR_PLAN, MAX_FLOORS, ROOMS_PER_FLOOR, SITES, SPACES_PER_SITE, UPPER_FLOOR_PLAN, type Site, type SpaceKind } from './sites.js'

export interface PlacedSpace {
  id: string
  site: Site
  floor: number
  /** On the highest floor of a building of two floors or more. */
  topFloor: boolean
  kind: SpaceKind
}

export interface PlacedDevice {
  id: string
  type: DeviceType
  /** Index into Layout.spaces: where the device is at the start of the period. */
  space: number
}

export interface Layout {
  sites: readonly Site[]
  spaces: readonly PlacedSpace[]
  devices: readonly PlacedDevice[]
  /** For each device type, the spaces it can be installed in (indexes into spaces). */
  installable: ReadonlyMap<DeviceType, readonly number[]>
}

/** Spaces fill floors of buildings in different cities; devices are spread over the spaces that suit them. */
export function buildLayout (random: Random, spaceCount: number, deviceCount: number): Layout {
  const siteCount = Math.min(SITES.length, Math.max(1, Math.ceil(spaceCount / SPACES_PER_SITE)))
  const sites = SITES.slice(0, siteCount)
  // One space each first, so no site is left empty.
  const spacesPerSite = apportion(spaceCount - siteCount, sites.map((site) => site.weight)).map((count) => count + 1)
  const spaces = sites.flatMap((site, index) => layOutSite(site, spacesPerSite[index]!))

  const installable = new Map<DeviceType, number[]>()
  for (const type of DEVICE_TYPES) {
    const suitable = spaces.flatMap((space, index) => type.installedIn.includes(space.kind) ? [index] : [])
    installable.set(type, suitable.length > 0 ? suitable : spaces.map((_, index) => index))
  }

  const devices: PlacedDevice[] = []
  const perType = apportion(deviceCount, DEVICE_TYPES.map((type) => type.share))
  DEVICE_TYPES.forEach((type, typeIndex) => {
    // Dealt round a shuffled list, so devices of a type spread evenly over the spaces that suit them.
    const order = random.shuffle([...installable.get(type)!])
    for (let n = 0; n < perType[typeIndex]!; n++) {
      devices.push({ id: `${type.idPrefix}-${String(n + 1).padStart(5, '0')}`, type, space: order[n % order.length]! })
    }
  })
  return { sites, spaces, devices, installable }
}

function layOutSite (site: Site, count: number): PlacedSpace[] {
  const floors = Math.min(MAX_FLOORS, Math.ceil(count / ROOMS_PER_FLOOR))
  const spaces: PlacedSpace[] = []
  for (let floor = 0; floor < floors; floor++) {
    const rooms = Math.floor(count / floors) + (floor < count % floors ? 1 : 0)
    const plan = floor === 0 ? GROUND_FLOOR_PLAN : UPPER_FLOOR_PLAN
    const numbers = new Map<SpaceKind, number>()
    for (let room = 0; room < rooms; room++) {
      const kind = plan[room % plan.length]!
      const number = (numbers.get(kind) ?? 0) + 1
      numbers.set(kind, number)
      spaces.push({
        id: `${site.id}/f${String(floor).padStart(2, '0')}/${kind}-${number}`,
        site,
        floor,
        topFloor: floors > 1 && floor === floors - 1,
        kind
      })
    }
  }
  return spaces
}

/** Splits total into whole parts proportional to the weights (largest remainder; ties to the earlier). */
export function apportion (total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0)
  const exact = weights.map((weight) => total * weight / sum)
  const parts = exact.map(Math.floor)
  let left = total - parts.reduce((a, b) => a + b, 0)
  const byRemainder = exact.map((value, index) => ({ index, remainder: value - Math.floor(value) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index)
  for (const { index } of byRemainder) {
    if (left === 0) break
    parts[index]!++
    left--
  }
  return parts
}
