import type { SpaceKind } from './sites.js'
import { RESTROOM_KINDS } from './sites.js'

/** Device types that share message codes (and numbered fault codes) form a family. */
export type DeviceFamily = 'dispenser' | 'people-counter' | 'cleaning-machine'

export type DeviceTypeKey = 'soap' | 'towel' | 'toilet-paper' | 'people-counter' | 'scrubber' | 'robot-vacuum'

export interface DeviceType {
  key: DeviceTypeKey
  /** Device IDs are this, a dash and a number: `soap-00042`. */
  idPrefix: string
  /** The tag listing every device of the type. */
  tagId: string
  family: DeviceFamily
  /** Share of all devices, relative to the other types. */
  share: number
  /** Where such a device is mounted; with none of these in the data set, anywhere. */
  installedIn: readonly SpaceKind[]
}

export const DEVICE_TYPES: readonly DeviceType[] = [
  { key: 'soap', idPrefix: 'soap', tagId: 'soap-dispensers', family: 'dispenser', share: 22, installedIn: [...RESTROOM_KINDS, 'kitchen'] },
  { key: 'towel', idPrefix: 'towel', tagId: 'paper-towel-dispensers', family: 'dispenser', share: 18, installedIn: [...RESTROOM_KINDS, 'kitchen'] },
  { key: 'toilet-paper', idPrefix: 'toilet-paper', tagId: 'toilet-paper-dispensers', family: 'dispenser', share: 28, installedIn: RESTROOM_KINDS },
  { key: 'people-counter', idPrefix: 'counter', tagId: 'people-counters', family: 'people-counter', share: 16, installedIn: [...RESTROOM_KINDS, 'lobby', 'meeting-room', 'kitchen'] },
  { key: 'scrubber', idPrefix: 'scrubber', tagId: 'floor-scrubbers', family: 'cleaning-machine', share: 6, installedIn: ['lobby', 'kitchen', 'open-office'] },
  { key: 'robot-vacuum', idPrefix: 'robot-vac', tagId: 'robot-vacuums', family: 'cleaning-machine', share: 10, installedIn: ['open-office', 'meeting-room', 'lobby'] }
]
