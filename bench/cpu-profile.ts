import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { projectRoot } from '../src/project-root.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  hitCount?: number
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples?: number[]
  timeDeltas?: number[]
  startTime: number
  endTime: number
}

export interface HotFunction {
  /** Function name, and where it is (relative to the project, or a node: module). */
  name: string
  selfMs: number
  selfPercent: number
}

/**
 * Where a function is, without this machine's paths. TypeScript files run through tsx, whose
 * output V8 reports on one line, so they are named without a line.
 */
function place (url: string, line: number): string {
  if (url === '') return ''
  let path = url
  if (url.startsWith('file://')) path = relative(projectRoot, fileURLToPath(url))
  return path.endsWith('.ts') ? path : `${path}:${line + 1}`
}

/**
 * The functions with the most self time in a .cpuprofile (V8's format, as node --cpu-prof writes
 * it), over its last lastMs milliseconds only: the profile covers the whole process, start-up
 * (loading the data) included, and the load being profiled ran just before the process stopped.
 */
export async function topSelfTime (file: string, lastMs: number, count = 15): Promise<HotFunction[]> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile
  const selfUs = new Map<number, number>()
  const samples = profile.samples ?? []
  const deltas = profile.timeDeltas ?? []
  const from = profile.endTime - lastMs * 1000
  let time = profile.startTime
  // Each sample's time runs until the next sample.
  for (let i = 0; i < samples.length; i++) {
    time += deltas[i] ?? 0
    if (time < from) continue
    const next = deltas[i + 1] ?? 0
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + next)
  }
  const totalUs = [...selfUs.values()].reduce((sum, us) => sum + us, 0)
  const byFunction = new Map<string, number>()
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0
    if (us === 0) continue
    const { functionName, url, lineNumber } = node.callFrame
    const where = place(url, lineNumber)
    const name = `${functionName === '' ? '(anonymous)' : functionName}${where === '' ? '' : ' ' + where}`
    byFunction.set(name, (byFunction.get(name) ?? 0) + us)
  }
  return [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, selfMs: Math.round(us / 100) / 10, selfPercent: Math.round(us / totalUs * 1000) / 10 }))
}
