import t from 'tap'
import { build, manyEvents, AUTH } from './helper.js'
import { TURN_BUDGET_MS, turnBudgetSpent, waitForTurnBudget } from '../src/http/turn-budget.js'

const checkPhase = async () => { await new Promise((resolve) => setImmediate(resolve)) }
const busy = (ms: number) => {
  const end = performance.now() + ms; while (performance.now() < end);
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

t.test('events requests read together past the budget wait for later turns, and are each answered as alone', async (t) => {
  const app = await build(t, { eventsFile: manyEvents(t.testdir(), 20_000), metricsToken: 'metrics-secret' })
  const deferred = async () => Number(/^requests_deferred_total (\d+)/m.exec((await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } })).body)?.[1] ?? -1)
  const url = '/svc/v2/events?start_date=2025-01-01T00:00:00Z&end_date=2025-12-31T00:00:00Z'
  const alone = await app.inject({ url, headers: AUTH })
  t.equal(alone.statusCode, 200)
  t.equal(await deferred(), 0)
  // Requests dispatched in one turn, each some milliseconds of the event loop.
  let turns = 0
  let counting = true
  const count = (): void => { turns++; if (counting) setImmediate(count) }
  setImmediate(count)
  const answers = await Promise.all(Array.from({ length: 40 }, async () => await app.inject({ url, headers: AUTH })))
  counting = false
  t.same([...new Set(answers.map((answer) => `${answer.statusCode} ${answer.body.length}`))], [`200 ${alone.body.length}`], 'every answer as the one alone')
  t.ok(answers.every((answer) => answer.body === alone.body))
  t.ok(await deferred() > 0, 'some waited for a later turn')
  t.ok(turns > 2, `answered over ${turns} turns`)
})
