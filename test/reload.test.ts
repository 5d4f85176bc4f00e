import t from 'tap'
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { AUTH, build, fixturesDir } from './helper.js'

/** Polls until `check` holds (file watching is asynchronous), or fails after `ms`. */
async function eventually (check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(50)
  }
  return false
}

t.test('the registry and specifications reload when their files change and on SIGHUP; a bad file keeps the old one', async (t) => {
  const dir = t.testdir()
  const entitiesFile = join(dir, 'entities.json')
  const specificationsFile = join(dir, 'specifications.json')
  copyFileSync(join(fixturesDir, 'entities.json'), entitiesFile)
  copyFileSync(join(fixturesDir, 'specifications.json'), specificationsFile)
  const app = await build(t, { entitiesFile, specificationsFile })
  const errors = async () => (await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z&device_ids=new-device', headers: AUTH })).json().errors
  t.same(await errors(), [{ id: 'new-device', item_type: 'device', message: 'invalid_device' }])

  const entities = JSON.parse(readFileSync(entitiesFile, 'utf8'))
  entities.devices.push({ id: 'new-device', space_id: entities.spaces[0].id })
  // As deploy tools do: a new file renamed over the old one.
  writeFileSync(join(dir, 'entities.json.tmp'), JSON.stringify(entities))
  renameSync(join(dir, 'entities.json.tmp'), entitiesFile)
  t.ok(await eventually(async () => (await errors()).length === 0), 'the new device is known once the file changed')

  writeFileSync(entitiesFile, '{ "devices": [ broken')
  await sleep(400)
  t.same(await errors(), [], 'a bad file keeps the old registry in service')

  entities.devices.pop()
  writeFileSync(entitiesFile, JSON.stringify(entities))
  t.ok(await eventually(async () => (await errors()).length === 1), 'and a good one after it is taken')

  const codes = async () => (await app.inject({ url: '/svc/v2/event_specifications', headers: AUTH })).json().data.length as number
  const before = await codes()
  const specifications = JSON.parse(readFileSync(specificationsFile, 'utf8'))
  specifications.push({ ...specifications[0], message_code: 'BRAND_NEW' })
  writeFileSync(specificationsFile, JSON.stringify(specifications))
  process.kill(process.pid, 'SIGHUP')
  t.ok(await eventually(async () => await codes() === before + 1), 'the specifications reload too')
})
