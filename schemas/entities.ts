import { Type, type Static } from '@sinclair/typebox'
import { Identifier } from './identifier.js'

/** The ENTITIES_FILE: the registry of devices, spaces and tags the provider knows. */
export const EntitiesFile = Type.Object({
  devices: Type.Array(Type.Object({ id: Identifier, space_id: Identifier }, { additionalProperties: false })),
  spaces: Type.Array(Type.Object({ id: Identifier }, { additionalProperties: false })),
  tags: Type.Array(Type.Object({
    id: Identifier,
    device_ids: Type.Array(Identifier),
    space_ids: Type.Array(Identifier)
  }, { additionalProperties: false }))
}, { additionalProperties: false })

export type EntitiesFile = Static<typeof EntitiesFile>
