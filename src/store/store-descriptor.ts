import type { Static, TObject } from '@sinclair/typebox'
import type { EventStore } from './event-store.js'
import type { EventWriter } from './event-writer.js'

/** What a store may tell operators while it opens (pino's signature: details, then message). */
export interface StoreLog {
  info (details: object, message: string): void
  warn (details: object, message: string): void
}

export interface StoreContext {
  log: StoreLog
}

/**
 * Everything the provider needs to know of one kind of store. Each store is a folder
 * `src/store/<name>/` whose index.ts exports its descriptor, and `stores.ts` lists them: the
 * configuration, the server and the ingest command read only that list.
 */
export interface StoreDescriptor<Environment extends TObject = TObject, Settings = unknown> {
  /** The value of STORE that chooses this store. */
  readonly name: string
  /**
   * The variables this store reads, as optional strings, each with a description of what it must
   * hold (a bad value is told that description, naming the variable).
   */
  readonly environment: Environment
  /** The store's settings from its variables; throws a ConfigError naming what is missing or contradictory. */
  settings (env: Static<Environment>): Settings
  /** Where its events are, in words, for logs and the ingest's first line. */
  describe (settings: Settings): string
  /** The store the provider queries. */
  open (settings: Settings, context: StoreContext): Promise<EventStore>
  /** The writer `npm run ingest` writes through. */
  openWriter (settings: Settings): EventWriter
}

/** A store chosen and configured: what the server and the ingest use. */
export interface ConfiguredStore {
  readonly name: string
  /** The descriptor's settings, read from the variables: opaque here, for logs and tests. */
  readonly settings: unknown
  /** Where its events are, in words. */
  readonly target: string
  open (context: StoreContext): Promise<EventStore>
  openWriter (): EventWriter
}

/** Typed identity: lets a descriptor's settings type follow from its functions. */
export function defineStore<Environment extends TObject, Settings> (descriptor: StoreDescriptor<Environment, Settings>): StoreDescriptor<Environment, Settings> {
  return descriptor
}

/** Reads a descriptor's settings from (already validated) variables. */
export function configureStore<Environment extends TObject, Settings> (descriptor: StoreDescriptor<Environment, Settings>, env: Static<Environment>): ConfiguredStore {
  const settings = descriptor.settings(env)
  return {
    name: descriptor.name,
    settings,
    target: descriptor.describe(settings),
    open: (context) => descriptor.open(settings, context),
    openWriter: () => descriptor.openWriter(settings)
  }
}
