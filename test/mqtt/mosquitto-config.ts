/** Debian's broker (apt-get install mosquitto); MOSQUITTO_BIN points elsewhere. */
export const MOSQUITTO = process.env.MOSQUITTO_BIN !== undefined && process.env.MOSQUITTO_BIN !== ''
  ? process.env.MOSQUITTO_BIN
  : '/usr/sbin/mosquitto'

/**
 * The configuration the tests' and the benchmark's brokers run with: anonymous, on loopback, and
 * with `persistenceDir`, sessions (clean: false, or a session expiry) that keep their
 * subscriptions and queued QoS 1 messages across a restart (written on SIGTERM and every second).
 */
export function mosquittoConfig (port: number, persistenceDir?: string): string {
  return [
    `listener ${port} 127.0.0.1`,
    'allow_anonymous true',
    ...(persistenceDir === undefined
      ? ['persistence false']
      : ['persistence true', `persistence_location ${persistenceDir}/`, 'autosave_interval 1']),
    // Started as root, mosquitto would switch to the user "mosquitto", who cannot write the directory.
    ...(process.getuid?.() === 0 ? ['user root'] : []),
    // Lift the queue limit of an offline persistent session (default 1000 messages) out of the way.
    'max_queued_messages 100000',
    // Events are small writes to each subscriber: without it, Nagle's algorithm held some back for a delayed ACK (40 ms).
    'set_tcp_nodelay true',
    'log_dest stderr',
    'log_type error',
    'log_type warning',
    ''
  ].join('\n')
}
