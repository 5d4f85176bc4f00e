import t from 'tap'
import { build, manyEvents, AUTH } from './helper.js'
import { TURN_BUDGET_MS, turnBudgetSpent, waitForTurnBudget } from '../src/http/turn-budget.js'

const checkPhase = async () => { await new Promise((resolve) => setImmediate(resolve)) }
const busy = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) { /* the event loop held */ }
}

t.test('a turn\'s budget is spent once its requests took TURN_BUDGET_MS, and renewed at the next turn', async (t) => {
  await checkPhase()
  t.equal(turnBudgetSpent(), false, 'the first of a turn')
  t.equal(turnBudgetSpent(), false)
  busy(TURN_BUDGET_MS + 1)
  t.equal(turnBudgetSpent(), true, 'spent')
  t.equal(await waitForTurnBudget(), true, 'waited for a later turn')
  t.equal(turnBudgetSpent(), false, 'a new budget')
  t.equal(await waitForTurnBudget(), false, 'not spent: no wait')
})

t.test('requests that wait go on in the order they came, one a turn, ahead of those that come later', async (t) => {
  await checkPhase()
  const order: string[] = []
  const request = async (name: string, work = 0): Promise<void> => {
    await waitForTurnBudget()
    busy(work)
    order.push(name)
  }
  turnBudgetSpent()
  busy(TURN_BUDGET_MS + 1)
  // Three wait; the first of them is let go from the check phase, where later requests come too.
  const first = [request('a', 2), request('b', 2), request('c', 2)]
  setImmediate(() => { first.push(request('late-1'), request('late-2')) })
  await Promise.all(first)
  await Promise.all(first)
  t.same(order, ['a', 'b', 'c', 'late-1', 'late-2'])
})

t.test('events requests read together past the budget wait for later turns, and are each answered as alone', async (t) => {
  const app = await build(t, { eventsFile: manyEvents(t.testdir(), 20_000), metricsToken: 'metrics-secret' })
  const deferred = async () => Number(/^requests_deferred_total (\d+)/m.exec((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })).body)?.[1] ?? -1)
  const url = '/svc/v2/events?start_date=2025-01-01T00:00:00Z&end_date=2025-12-31T00:00:00Z'
  const alone = await app.inject({ url, headers: AUTH })
  t.equal(alone.statusCode, 200)
  t.equal(await deferred(), 0)
  // Requests dispatched in one turn, each some milliseconds of the event loop.
  const answers = await Promise.all(Array.from({ length: 40 }, async () => await app.inject({ url, headers: AUTH })))
  t.same([...new Set(answers.map((answer) => `${answer.statusCode} ${answer.body.length}`))], [`200 ${alone.body.length}`], 'every answer as the one alone')
  t.ok(answers.every((answer) => answer.body === alone.body))
  t.ok(await deferred() > 0, 'some waited for a later turn')
})
