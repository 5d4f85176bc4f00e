const started = performance.now()

/** A progress line on standard error, with the time since the run started. */
export function log (message: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(6)
  process.stderr.write(`[bench ${seconds} s] ${message}\n`)
}
