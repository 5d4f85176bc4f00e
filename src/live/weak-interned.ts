/**
 * Objects kept under a key while something else holds them (a WeakRef): an equal one made again
 * is let go for the one held, so that thousands of streams asking the same share one copy.
 */
export class WeakInterned<T extends object> {
  readonly #byKey = new Map<string, WeakRef<T>>()
  readonly #forgotten = new FinalizationRegistry<string>((key) => {
    // Another object of this key may have taken its place since.
    if (this.#byKey.get(key)?.deref() === undefined) this.#byKey.delete(key)
  })

  /** The object held under this key, or `value`, held from now on. */
  intern (key: string, value: T): T {
    const held = this.#byKey.get(key)?.deref()
    if (held !== undefined) return held
    this.#byKey.set(key, new WeakRef(value))
    this.#forgotten.register(value, key)
    return value
  }

  /** Keys held (for tests). */
  get size (): number {
    return this.#byKey.size
  }
}
