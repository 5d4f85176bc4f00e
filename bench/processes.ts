import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'

/**
 * Every child process the benchmark starts, so each one is stopped by its own ID whatever way the
 * run ends: normally, on an error, or on Ctrl-C. Children run in their own process group
 * (detached), so a provider's cluster workers go with it.
 */
const children = new Set<ChildProcess>()

export interface Child {
  process: ChildProcess
  pid: number
  /** The last few kilobytes of its standard output and error, for error messages. */
  output (): string
  /** Whether it has exited. */
  exited (): boolean
}

export function startChild (command: string, args: readonly string[], options: SpawnOptions & { echo?: boolean } = {}): Child {
  const child = spawn(command, args, { ...options, stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'], detached: true })
  if (child.pid === undefined) throw new Error(`cannot start ${command}`)
  children.add(child)
  child.on('exit', () => children.delete(child))
  child.on('error', () => children.delete(child))
  let output = ''
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000)
    if (options.echo === true) process.stderr.write(chunk)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  return {
    process: child,
    pid: child.pid,
    output: () => output,
    exited: () => child.exitCode !== null || child.signalCode !== null
  }
}

/** Resolves with the exit code (or the signal's name) when the child ends. */
export async function waitForExit (child: Child): Promise<number | string> {
  if (child.exited()) return child.process.exitCode ?? child.process.signalCode ?? 'unknown'
  const [code, signal] = await once(child.process, 'exit') as [number | null, string | null]
  return code ?? signal ?? 'unknown'
}

/** SIGTERM to the child's process group, SIGKILL after graceMs. */
export async function stopChild (child: Child, graceMs = 10_000): Promise<void> {
  if (child.exited()) return
  const exited = once(child.process, 'exit')
  signalGroup(child.pid, 'SIGTERM')
  const timer = setTimeout(() => signalGroup(child.pid, 'SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

export async function stopAllChildren (): Promise<void> {
  await Promise.all([...children].map(async (child) => {
    if (child.pid === undefined) return
    await stopChild({ process: child, pid: child.pid, output: () => '', exited: () => child.exitCode !== null || child.signalCode !== null })
  }))
}

function signalGroup (pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {}
  }
}

/** The IDs of this process's direct children (those started elsewhere too, such as influxd). */
export function directChildPids (pid: number = process.pid): number[] {
  return descendants(pid, false)
}

/** A process and every process below it, read from /proc (Linux). */
export function processTree (pid: number): number[] {
  return [pid, ...descendants(pid, true)]
}

function descendants (pid: number, recursive: boolean): number[] {
  const found: number[] = []
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return found
  }
  for (const task of tasks) {
    let text = ''
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
    } catch {
      continue
    }
    for (const id of text.split(' ')) {
      if (id.trim() === '') continue
      const child = Number(id)
      found.push(child)
      if (recursive) found.push(...descendants(child, true))
    }
  }
  return found
}

/**
 * Last resort when the process exits without cleaning up (an exception, process.exit): SIGKILL
 * every child still known, and every direct child (influxd, started by the test helper).
 */
export function killChildrenNow (): void {
  for (const child of children) {
    if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL')
  }
  for (const pid of directChildPids()) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
}
