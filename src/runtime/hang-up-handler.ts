/**
 * Installed first, before any other module of the server runs: a hang-up (SIGHUP) is the reload
 * signal (src/data/reloadable-file.ts), never a shutdown, but until a process has a handler for
 * it, Node's default ends the process. The data files' own handlers come with the app's plugins,
 * go with them while it closes, and a hang-up during the start-up's load or the shutdown's grace
 * (logrotate's postrotate, a config-sync sidecar) ended the process. A process just started reads
 * its files as they are anyway.
 */
process.on('SIGHUP', () => {})
