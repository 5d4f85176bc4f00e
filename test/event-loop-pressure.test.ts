import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { AUTH, build } from './helper.js'

const EVENTS = '/svc/v2/events?start_date=2024-01-01T00:00:00Z'

function blockFor (ms: number): void {
  const until = Date.now() + ms
  while (Date.now() < until) { /* the event loop is blocked, as by a load or a runaway answer */ }
}

t.test('the event-loop delay of start-up is not load: served at once; a delay later is refused with 503', async (t) => {
  const app = await build(t, { limits: { ...(await import('./helper.js')).testConfig().limits, maxEventLoopDelayMs: 50 } })
  // As loading a large store does, before the server has served anything.
  blockFor(1500)
  await sleep(20)
  t.equal((await app.inject({ url: EVENTS, headers: AUTH })).statusCode, 200, 'the first request after start-up is served')

  await sleep(3000)
  blockFor(1500)
  await sleep(20)
  const refused = await app.inject({ url: EVENTS, headers: AUTH })
  t.equal(refused.statusCode, 503, 'a delay while serving is refused')
  t.equal(refused.headers['retry-after'], '5')
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'the probes are exempt')
})
