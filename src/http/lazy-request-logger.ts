import type { FastifyBaseLogger, LogLevel } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/**
 * A request's logger that becomes a real child of the provider's logger (with the request's ID
 * bound) only when something is logged at a level the logger writes. Fastify makes a pino child
 * for every request, and at the default level almost none of them ever writes a line: making it
 * (its bindings serialised, a new object whose prototype is the parent) was about 1 µs of a
 * small request's CPU (BENCHMARKS.md, "What profiling found").
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger & { isLevelEnabled(level: string): boolean }
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #child: FastifyBaseLogger | undefined

  constructor (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }
    this.#bindings = bindings
    this.#options = options
  }

  /** The real child, made on first use. */
  #real (): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }

  #log (level: LogMethod, args: unknown[]): void {
    // Once made, the child decides (its level may have been set apart from its parent's).
    const child = this.#child
    if (child === undefined && !this.#parent.isLevelEnabled(level)) return
    const logger = (child ?? this.#real()) as unknown as Record<LogMethod, (...args: unknown[]) => void>
    logger[level](...args)
  }

  get level (): LogLevel {
    return (this.#child ?? this.#parent).level as LogLevel
  }

  set level (level: LogLevel) {
    this.#real().level = level
  }

  fatal (...args: unknown[]): void { this.#log('fatal', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  trace (...args: unknown[]): void { this.#log('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options)
  }
}

/** Fastify's childLoggerFactory: a LazyRequestLogger per request. */
export function lazyRequestLogger (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options)
}
