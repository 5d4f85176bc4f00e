import { FormatRegistry, type TSchema, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { parseEventTime } from '../time/rfc3339.js'

FormatRegistry.Set('event-time', (value) => parseEventTime(value) !== undefined)

export interface SchemaProblem {
  /** Where in the value, like `devices[3].space_id`; empty for the value itself. */
  path: string
  reason: string
}

export interface SchemaCheck<T extends TSchema> {
  is (value: unknown): value is Static<T>
  /** The first problem, for a person to read; undefined when the value fits. */
  problem (value: unknown): SchemaProblem | undefined
}

/** Compiles a TypeBox schema once, for data checked many times (every line of a file). */
export function compileSchemaCheck<T extends TSchema> (schema: T): SchemaCheck<T> {
  const compiled = TypeCompiler.Compile(schema)
  return {
    is: (value): value is Static<T> => compiled.Check(value),
    problem (value) {
      if (compiled.Check(value)) return undefined
      const first = compiled.Errors(value).First()
      if (first === undefined) return { path: '', reason: 'does not match the schema' }
      return { path: describePath(first.path), reason: describeError(first.schema, first.message, first.value) }
    }
  }
}

function describePath (path: string): string {
  return path.split('/').slice(1).map((part) => /^\d+$/.test(part) ? `[${part}]` : `.${part}`).join('').replace(/^\./, '')
}

function describeError (schema: TSchema, message: string, value: unknown): string {
  if (schema.format === 'event-time') {
    return `${JSON.stringify(value)} is not an RFC 3339 date-time between 1678 and 2261`
  }
  // A value only ever written (JSON Schema's writeOnly), such as a token's hash, which an
  // operator may have pasted the token itself into: its message goes to logs, the value does not.
  if (schema.writeOnly === true) {
    return `is not ${typeof schema.description === 'string' ? schema.description : 'what it must be'} (its value is not repeated: it may be the token itself)`
  }
  if (typeof schema.description === 'string' && typeof value === 'string') {
    return `${JSON.stringify(value)} is not ${schema.description}`
  }
  return message.charAt(0).toLowerCase() + message.slice(1)
}
