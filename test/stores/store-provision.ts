/** What a provision needs of the test it runs in. */
export interface ProvisionTest {
  testdir (): string
  teardown (fn: () => unknown): void
}

/**
 * How the tests get an empty instance of one store: the variables that choose and configure it
 * (STORE and its own). Each store in src/store/stores.ts has a file test/stores/<name>.ts whose
 * default export is one of these; the contract test finds them by name, so a new store needs its
 * file here and no line in any test. Returns why it cannot run here instead, to skip.
 */
export type StoreProvision = (t: ProvisionTest) => Promise<Record<string, string> | { skip: string }>
