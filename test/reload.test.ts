import t from 'tap'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
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

t.test('a file behind symbolic links reloads when a link is swapped to a new version (Kubernetes ConfigMap and Secret mounts) and when its target changes in another folder', async (t) => {
  const dir = t.testdir()
  // As the kubelet lays a mount out: file -> ..data/file, ..data -> ..<version>/, swapped by renaming a new ..data link over it.
  mkdirSync(join(dir, 'mount', '..v1'), { recursive: true })
  copyFileSync(join(fixturesDir, 'entities.json'), join(dir, 'mount', '..v1', 'entities.json'))
  symlinkSync('..v1', join(dir, 'mount', '..data'))
  symlinkSync(join('..data', 'entities.json'), join(dir, 'mount', 'entities.json'))
  // And a link to a file kept in another folder.
  mkdirSync(join(dir, 'elsewhere'))
  copyFileSync(join(fixturesDir, 'specifications.json'), join(dir, 'elsewhere', 'specifications.json'))
  symlinkSync(join(dir, 'elsewhere', 'specifications.json'), join(dir, 'specifications.json'))
  const app = await build(t, { entitiesFile: join(dir, 'mount', 'entities.json'), specificationsFile: join(dir, 'specifications.json') })
  const errors = async () => (await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z&device_ids=new-device', headers: AUTH })).json().errors
  t.same(await errors(), [{ id: 'new-device', item_type: 'device', message: 'invalid_device' }])

  const entities = JSON.parse(readFileSync(join(fixturesDir, 'entities.json'), 'utf8'))
  entities.devices.push({ id: 'new-device', space_id: entities.spaces[0].id })
  mkdirSync(join(dir, 'mount', '..v2'))
  writeFileSync(join(dir, 'mount', '..v2', 'entities.json'), JSON.stringify(entities))
  symlinkSync('..v2', join(dir, 'mount', '..data_tmp'))
  renameSync(join(dir, 'mount', '..data_tmp'), join(dir, 'mount', '..data'))
  rmSync(join(dir, 'mount', '..v1'), { recursive: true })
  t.ok(await eventually(async () => (await errors()).length === 0), 'the new version is in service once the link is swapped')

  const codes = async () => (await app.inject({ url: '/svc/v2/event_specifications', headers: AUTH })).json().data.length as number
  const before = await codes()
  const specifications = JSON.parse(readFileSync(join(dir, 'elsewhere', 'specifications.json'), 'utf8'))
  specifications.push({ ...specifications[0], message_code: 'BRAND_NEW' })
  writeFileSync(join(dir, 'elsewhere', 'specifications.json'), JSON.stringify(specifications))
  t.ok(await eventually(async () => await codes() === before + 1), 'a change of the target in its own folder is seen too')
})

t.test('a file changed while its first version is still loading is loaded again', async (t) => {
  const { reloadableFile } = await import('../src/data/reloadable-file.js')
  const dir = t.testdir()
  const file = join(dir, 'value.json')
  writeFileSync(file, '"first"')
  const quiet = { info () {}, error () {} }
  const loaded = await reloadableFile(file, async (path) => {
    const value = JSON.parse(readFileSync(path, 'utf8')) as string
    // A slow first load (a large registry), with the file replaced meanwhile.
    if (value === 'first') {
      writeFileSync(join(dir, 'value.json.tmp'), '"second"')
      renameSync(join(dir, 'value.json.tmp'), file)
      await sleep(300)
    }
    return value
  }, () => ({}), quiet)
  t.teardown(() => { loaded.close() })
  t.equal(loaded.current, 'first')
  t.ok(await eventually(async () => loaded.current === 'second', 5000), 'the version written during the load is taken')
})

t.test('nothing is reloaded after close, even when a look at the file was under way', async (t) => {
  const { reloadableFile } = await import('../src/data/reloadable-file.js')
  const dir = t.testdir()
  mkdirSync(join(dir, 'elsewhere'))
  const target = join(dir, 'elsewhere', 'value.json')
  const file = join(dir, 'value.json')
  writeFileSync(target, '0')
  symlinkSync(target, file)
  const quiet = { info () {}, error () {} }
  let afterClose = 0
  for (let round = 1; round <= 40; round++) {
    let closed = false
    const loaded = await reloadableFile(file, async (path) => Number(readFileSync(path, 'utf8')), () => ({}), quiet, () => { if (closed) afterClose++ }, 5)
    writeFileSync(target, String(round))
    await sleep(round % 10)
    loaded.close()
    closed = true
  }
  await sleep(300)
  t.equal(afterClose, 0, 'no reload ran after its file was closed')
})

t.test('a file replaced for a while by a named pipe is refused, not waited on: later versions still reload', async (t) => {
  // Reading a FIFO waits for a writer: the reload, and every later one of its file, waited for good.
  const dir = t.testdir()
  const entitiesFile = join(dir, 'entities.json')
  copyFileSync(join(fixturesDir, 'entities.json'), entitiesFile)
  const logged: string[] = []
  const app = await build(t, { entitiesFile }, { logger: { level: 'info', stream: { write: (line: string) => { logged.push(line) } } } })
  const errors = async () => (await app.inject({ url: '/svc/v2/events?start_date=2025-01-01T00:00:00Z&device_ids=new-device', headers: AUTH })).json().errors
  execFileSync('mkfifo', [join(dir, 'fifo')])
  renameSync(join(dir, 'fifo'), entitiesFile)
  t.ok(await eventually(async () => logged.some((line) => line.includes('reload failed') && line.includes('not a regular file'))), 'the pipe is refused, named')
  const entities = JSON.parse(readFileSync(join(fixturesDir, 'entities.json'), 'utf8'))
  entities.devices.push({ id: 'new-device', space_id: entities.spaces[0].id })
  writeFileSync(join(dir, 'entities.json.tmp'), JSON.stringify(entities))
  renameSync(join(dir, 'entities.json.tmp'), entitiesFile)
  t.ok(await eventually(async () => (await errors()).length === 0), 'the next version is taken')
})

t.test('hang-ups while a reload is under way are one more reload, not one each', async (t) => {
  // A storm of hang-ups queued a load of every file for each signal, without end.
  const { reloadableFile } = await import('../src/data/reloadable-file.js')
  const file = join(t.testdir(), 'value.json')
  writeFileSync(file, '1')
  let loads = 0
  const quiet = { info () {}, error () {} }
  const loaded = await reloadableFile(file, async (path) => {
    loads++
    await sleep(50)
    return Number(readFileSync(path, 'utf8'))
  }, () => ({}), quiet, undefined, 60_000)
  t.teardown(() => { loaded.close() })
  loads = 0
  const first = loaded.reload()
  await sleep(10)
  t.equal(loads, 1, 'a load under way')
  writeFileSync(file, '2')
  const rest = Array.from({ length: 500 }, () => loaded.reload())
  await Promise.all([first, ...rest])
  t.equal(loads, 2, 'the one under way, then one more')
  t.equal(loaded.current, 2, 'which reads the file as it is after the last signal')
})
