/** A configuration that cannot run; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}
