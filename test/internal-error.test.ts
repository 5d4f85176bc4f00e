import t from 'tap'
import { AUTH, testConfig } from './helper.js'

t.test('an unexpected failure is 500 internal_error, logged, with nothing of it in the answer', async (t) => {
  const { buildApp } = await t.mockImport<typeof import('../src/app.js')>('../src/app.js', {
    '../src/events/build-event-query.ts': {
      buildEventQuery () { throw new Error('secret detail: /srv/data is gone') }
    }
  })
  const logged: string[] = []
  const app = await buildApp(testConfig({ logLevel: 'error' }), {
    logger: { level: 'error', stream: { write: (line: string) => { logged.push(line) } } }
  })
  t.teardown(() => app.close())
  const response = await app.inject({ url: '/svc/v2/events?start_date=2024-01-01T00:00:00Z', headers: AUTH })
  t.equal(response.statusCode, 500)
  t.same(response.json(), { status: 500, message: 'internal_error' })
  t.notMatch(response.body, 'secret')
  t.match(logged.join(''), 'secret detail: /srv/data is gone', 'the cause goes to the log')
  t.match(JSON.parse(logged.find((line) => line.includes('secret detail'))!), { reqId: /^req-/ }, 'with the request\'s ID (src/http/lazy-request-logger.ts)')
})
