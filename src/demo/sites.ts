/** The kinds of room a floor holds; a space ID names its kind (`ams-hq/f02/restroom-m-1`). */
export type SpaceKind = 'lobby' | 'restroom-m' | 'restroom-f' | 'restroom-accessible' | 'kitchen' | 'meeting-room' | 'open-office'

export const RESTROOM_KINDS: readonly SpaceKind[] = ['restroom-m', 'restroom-f', 'restroom-accessible']

export interface Site {
  /** The first part of every space ID in the building. */
  id: string
  city: string
  /**
   * Local time is UTC plus this many hours (standard time; summer time is ignored), so office
   * hours fall at plausible UTC times.
   */
  utcOffsetHours: number
  /** Share of the spaces, relative to the other sites in use. */
  weight: number
}

/** Sites in the order they are taken into use: a small data set gets the first ones. */
export const SITES: readonly Site[] = [
  { id: 'ams-hq', city: 'Amsterdam', utcOffsetHours: 1, weight: 3 },
  { id: 'par-defense', city: 'Paris', utcOffsetHours: 1, weight: 2 },
  { id: 'ber-mitte', city: 'Berlin', utcOffsetHours: 1, weight: 2 },
  { id: 'mad-castellana', city: 'Madrid', utcOffsetHours: 1, weight: 1.5 },
  { id: 'bru-central', city: 'Brussels', utcOffsetHours: 1, weight: 1.5 },
  { id: 'lon-kings-cross', city: 'London', utcOffsetHours: 0, weight: 1.5 }
]

/** About this many spaces make one site; more spaces open more sites, up to all of them. */
export const SPACES_PER_SITE = 8

/**
 * The rooms of a floor in the order they are laid out: a floor with fewer rooms gets the first
 * ones (restrooms first: they carry most devices), a floor with more repeats the plan.
 */
export const GROUND_FLOOR_PLAN: readonly SpaceKind[] = ['lobby', 'restroom-m', 'restroom-f', 'restroom-accessible', 'kitchen', 'meeting-room', 'meeting-room']
export const UPPER_FLOOR_PLAN: readonly SpaceKind[] = ['restroom-m', 'restroom-f', 'kitchen', 'open-office', 'meeting-room', 'meeting-room', 'restroom-accessible']

/** A building gets a floor for about this many spaces, so even a small one has a ground floor and an upper floor. */
export const ROOMS_PER_FLOOR = 5

/** Buildings stop growing upwards here; beyond it floors get more rooms instead. */
export const MAX_FLOORS = 40
