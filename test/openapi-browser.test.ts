import { existsSync } from 'node:fs'
import t from 'tap'
import { chromium } from 'playwright-core'
import { build, TOKEN } from './helper.js'

/**
 * Swagger UI in a real headless Chromium: Debian's `chromium` (`.ci/run` installs it). Never a
 * browser playwright would download: playwright-core downloads none, and it is given this one.
 * Skipped outside CI when it is absent; in CI its absence fails.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const present = existsSync(CHROMIUM)
const skip = !present && process.env.CI === undefined ? `no Chromium at ${CHROMIUM} (CI installs it)` : false

t.test('Swagger UI: both endpoints listed; Try it out with a token shows the events', { skip, timeout: 60_000 }, async (t) => {
  if (!present) throw new Error(`CI is set and there is no Chromium at ${CHROMIUM}`)
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('not listening')
  const base = `http://127.0.0.1:${address.port}`

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'], timeout: 20_000 })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  page.setDefaultTimeout(10_000)
  const failures: string[] = []
  page.on('pageerror', (error) => failures.push(error.message))

  await page.goto(`${base}/docs`)
  const events = page.locator('#operations-events-getEvents')
  const specifications = page.locator('#operations-specifications-getEventSpecifications')
  await events.waitFor()
  t.equal(await events.locator('.opblock-summary-path').getAttribute('data-path'), '/svc/v2/events', 'the events endpoint is listed')
  t.equal(await specifications.locator('.opblock-summary-path').getAttribute('data-path'), '/svc/v2/event_specifications', 'the specifications endpoint is listed')

  // Authorize: the bearer token, for every request the page makes.
  await page.locator('.scheme-container button.authorize').click()
  const dialog = page.locator('.dialog-ux .modal-ux')
  await dialog.locator('#auth-bearer-value').fill(TOKEN)
  await dialog.locator('button.authorize').click()
  await dialog.locator('button.btn-done').click()
  await dialog.waitFor({ state: 'detached' })

  // GET /svc/v2/events: Try it out, a start date, Execute.
  await events.locator('.opblock-summary').first().click()
  await events.getByRole('button', { name: 'Try it out' }).click()
  await events.locator('tr[data-param-name="start_date"] input').fill('2024-01-01T00:00:00Z')
  await events.getByRole('button', { name: 'Execute' }).click()

  const live = events.locator('.live-responses-table')
  const status = live.locator('.response .response-col_status').first()
  await status.waitFor()
  t.equal((await status.innerText()).trim(), '200', 'the response status')
  const body = await live.locator('.response-col_description .microlight, .response-col_description pre').first().innerText()
  t.match(body, /"message_id": "e-01"/, 'the events of the fixtures are shown')
  t.match(body, /"errors": \[\]/)
  t.match(await events.locator('.curl-command, .curl').first().innerText(), `Authorization: Bearer ${TOKEN}`, 'with the token')
  t.match(await events.locator('.request-url').innerText(), /\/svc\/v2\/events\?start_date=2024-01-01T00%3A00%3A00Z/, 'the request went to the provider')
  t.same(failures, [], 'no error in the page')
})
