import t from 'tap'
import { EXTERNAL_MEMORY_FLAG, countExternalMemoryInHeapLimit } from '../src/store/memory/external-memory-gc.js'

t.test('set on V8 13 and later (Node 24), in the form V8 takes it', async (t) => {
  for (const version of ['13.6.233.17-node.28', '14.0.1']) {
    const set: string[] = []
    t.equal(countExternalMemoryInHeapLimit(version, (flags) => { set.push(flags) }), true, version)
    t.same(set, [EXTERNAL_MEMORY_FLAG], version)
  }
  t.match(EXTERNAL_MEMORY_FLAG, /^--[a-z-]+$/)
})

t.test('left alone on an older V8 (Node 20), which would warn about an unknown flag', async (t) => {
  for (const version of ['11.3.244.8-node.25', '12.4.254.21-node.33']) {
    const set: string[] = []
    t.equal(countExternalMemoryInHeapLimit(version, (flags) => { set.push(flags) }), false, version)
    t.same(set, [], version)
  }
})
