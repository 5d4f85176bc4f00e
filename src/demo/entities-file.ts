import type { EntitiesFile } from '../../schemas/entities.js'
import { DEVICE_TYPES } from './device-types.js'
import type { Layout } from './site-layout.js'
import { RESTROOM_KINDS } from './sites.js'

/**
 * The entities file: devices with the space they are in at the end of the period (finalSpaces,
 * indexes into layout.spaces), spaces, and tags. A tag per building lists its spaces, a tag per
 * device type its devices, and a few tags mix devices and spaces.
 */
export function buildEntitiesFile (layout: Layout, finalSpaces: readonly number[]): EntitiesFile {
  const { spaces, devices } = layout
  const spaceIds = (keep: (space: Layout['spaces'][number]) => boolean) => spaces.filter(keep).map((space) => space.id)
  const deviceIds = (keep: (device: Layout['devices'][number], index: number) => boolean) =>
    devices.filter(keep).map((device) => device.id)

  const tags: EntitiesFile['tags'] = [
    ...layout.sites.map((site) => ({ id: `site-${site.id}`, device_ids: [], space_ids: spaceIds((space) => space.site === site) })),
    ...DEVICE_TYPES.map((type) => ({ id: type.tagId, device_ids: deviceIds((device) => device.type === type), space_ids: [] })),
    {
      // The executive floors: their rooms and whatever is installed in them now.
      id: 'vip-floors',
      device_ids: deviceIds((_, index) => spaces[finalSpaces[index]!]!.topFloor),
      space_ids: spaceIds((space) => space.topFloor)
    },
    {
      // What the night shift looks after: the cleaning machines and the entrance halls.
      id: 'night-shift',
      device_ids: deviceIds((device) => device.type.family === 'cleaning-machine'),
      space_ids: spaceIds((space) => space.kind === 'lobby')
    },
    { id: 'restrooms', device_ids: [], space_ids: spaceIds((space) => RESTROOM_KINDS.includes(space.kind)) }
  ]

  return {
    devices: devices.map((device, index) => ({ id: device.id, space_id: spaces[finalSpaces[index]!]!.id })),
    spaces: spaces.map((space) => ({ id: space.id })),
    tags
  }
}
