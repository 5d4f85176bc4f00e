import t from 'tap'
import { describeCpuPlacement, planCpuPlacement } from '../bench/cpu-placement.js'

const canPin = () => true

t.test('influxd gets the upper half of the CPUs, the rest the others', async (t) => {
  t.same(planCpuPlacement(true, 2, canPin), { mode: 'separate', storeCpus: [1], otherCpus: [0], reason: undefined })
  t.same(planCpuPlacement(true, 3, canPin), { mode: 'separate', storeCpus: [2], otherCpus: [0, 1], reason: undefined })
  t.same(planCpuPlacement(true, 8, canPin).storeCpus, [4, 5, 6, 7])
  t.match(describeCpuPlacement(planCpuPlacement(true, 2, canPin)), /influxd on CPU 1, .* on CPU 0/)
})

t.test('every process shares every CPU when asked, on one CPU, or without taskset', async (t) => {
  const cases = [
    { separate: false, cpus: 2, pin: canPin, reason: '--shared-cores' },
    { separate: true, cpus: 1, pin: canPin, reason: 'one CPU' },
    { separate: true, cpus: 4, pin: () => false, reason: 'taskset (util-linux) is not installed' }
  ]
  for (const { separate, cpus, pin, reason } of cases) {
    const placement = planCpuPlacement(separate, cpus, pin)
    const all = Array.from({ length: cpus }, (_, cpu) => cpu)
    t.same(placement, { mode: 'shared', storeCpus: all, otherCpus: all, reason }, reason)
    t.match(describeCpuPlacement(placement), reason)
  }
})
