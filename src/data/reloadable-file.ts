import { watch, type FSWatcher, type Stats } from 'node:fs'
import { stat } from 'node:fs/promises'
import { basename, dirname } from 'node:path'

export interface ReloadLog {
  info (details: object, message: string): void
  error (details: object, message: string): void
}

export interface ReloadableFile<T> {
  /** What was loaded last, successfully. */
  readonly current: T
  /** Loads the file again now; a bad file keeps the current value (and is logged). */
  reload (): Promise<void>
  /** Loads the file again once the load under way (if any) has ended, if that one, or the last, failed. */
  retryIfRefused (): void
  close (): void
}

/**
 * What SIGHUP reloads: one process listener for every file of every app in the process (tests
 * open many apps at once; a listener each would pass Node's listener warning).
 */
const onHangUp = new Set<() => void>()
function hangUp (): void {
  for (const reload of onHangUp) reload()
}

/** Changes closer together than this are one reload (an editor writes a file in several steps). */
const SETTLE_MS = 100

/**
 * How often the file's own status is read, following symbolic links: a change the folder's watch
 * cannot see (a Kubernetes ConfigMap or Secret mount swaps a `..data` link to a new version; a
 * link's target is edited in its own folder) is taken within this time.
 */
export const POLL_MS = 1000

/** What tells one version of a file from another: its inode, size and times (through links). */
function versionOf (stats: Pick<Stats, 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`
}

async function versionOnDisk (file: string): Promise<string | undefined> {
  try {
    return versionOf(await stat(file))
  } catch {
    return undefined
  }
}

/**
 * A data file the provider serves from and reloads while serving: on SIGHUP, and when the file
 * changes on disk. The new value is swapped in whole, between requests; a file that fails to
 * load keeps the old value in service and logs the message start-up would have printed. The
 * directory is watched, not the file: editors and deploy tools replace a file by renaming a new
 * one over it, which a watch on the old file would not see. And the file's status is read every
 * POLL_MS through its links, for the changes no watch of its folder sees (POLL_MS), and compared
 * with the version last loaded (read before it was loaded, so a change made while it loads, the
 * first time too, is loaded next); a version once loaded, or refused, is not loaded again by the
 * poll.
 */
export async function reloadableFile<T> (
  file: string,
  load: (file: string) => Promise<T>,
  counts: (value: T) => object,
  log: ReloadLog,
  /** Called with each value that replaces the current one (not the first). */
  onReload?: (value: T) => void,
  /** How often the file's status is read (tests look more often). */
  pollMs = POLL_MS
): Promise<ReloadableFile<T>> {
  let loadedVersion = await versionOnDisk(file)
  let current = await load(file)
  let pending: NodeJS.Timeout | undefined
  let loading: Promise<void> = Promise.resolve()
  // Once closed, nothing loads or calls onReload again: a look at the file, a wait to settle or a
  // load may still be under way then (its app is closing).
  let closed = false
  let refused = false

  // A reload queued behind the one under way, not started yet: any further call is that one
  // (it reads the file as it is when it starts), so that a storm of hang-ups is one more load,
  // not a load each, without end.
  let queued: Promise<void> | undefined
  const reload = (): Promise<void> => {
    if (queued !== undefined) return queued
    queued = loading = loading.then(async () => {
      queued = undefined
      if (closed) return
      // Read before the file: a change made while it loads is a version still to load.
      loadedVersion = await versionOnDisk(file)
      let loaded: Awaited<T>
      try {
        loaded = await load(file)
      } catch (error) {
        refused = true
        log.error({ file }, `reload failed, the previous version stays in service: ${(error as Error).message}`)
        return
      }
      if (closed) return
      current = loaded
      refused = false
      log.info({ file, ...counts(current) }, 'reloaded')
      // In service now, whatever its listeners do.
      try {
        onReload?.(current)
      } catch (error) {
        log.error({ file, err: error }, 'reloaded, but what follows a reload failed')
      }
    })
    return loading
  }
  const onSignal = () => { reload().catch(() => {}) }
  /** A reload after SETTLE_MS without another change. */
  const schedule = () => {
    if (closed) return
    clearTimeout(pending)
    pending = setTimeout(() => {
      pending = undefined
      onSignal()
    }, SETTLE_MS)
    pending.unref()
  }
  if (onHangUp.size === 0) process.on('SIGHUP', hangUp)
  onHangUp.add(onSignal)

  let watcher: FSWatcher | undefined
  try {
    const name = basename(file)
    watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return
      schedule()
    })
    watcher.on('error', () => watcher?.close())
  } catch {
    // A directory that cannot be watched: SIGHUP and the poll still reload.
  }
  let polling = false
  const poll = setInterval(() => {
    if (polling) return
    polling = true
    versionOnDisk(file).then((version) => {
      polling = false
      // A missing file is no version to load: the old value stays.
      if (version === undefined || version === loadedVersion || pending !== undefined) return
      schedule()
    }, () => { polling = false })
  }, pollMs)
  poll.unref()

  return {
    get current () { return current },
    retryIfRefused () {
      // After the load under way: the one that counts may still be deciding.
      loading.then(() => { if (refused && !closed) reload().catch(() => {}) }, () => {})
    },
    reload,
    close () {
      closed = true
      onHangUp.delete(onSignal)
      if (onHangUp.size === 0) process.off('SIGHUP', hangUp)
      clearTimeout(pending)
      watcher?.close()
      clearInterval(poll)
    }
  }
}
