import { request as httpRequest, Agent } from 'node:http'
import { PassThrough } from 'node:stream'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import batchedWrites from '../plugins/batched-writes.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { bulkWorkPaced, holdAnswer, nextTurn, turnAfterHeldAnswers, writeAtOnce } from '../src/http/held-answers.js'

/** A Fastify server with the plugin, logging into an array; routes are added by the caller. */
async function serverWith (t: Test, routes: (fastify: FastifyInstance) => void) {
  const lines: Array<{ level: number, msg: string }> = []
  const fastify = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  fastify.register(batchedWrites)
  fastify.register(async (instance) => { routes(instance) })
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => fastify.close())
  return { fastify, lines, url: `http://127.0.0.1:${(fastify.server.address() as { port: number }).port}` }
}

interface Answer { status: number, body: string, socketReused: boolean }

function get (url: string, agent?: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: agent ?? false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, body, socketReused: req.reusedSocket }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('a lone answer is held to the end of the turn after its own', async (t) => {
  const seen: Array<{ sent: boolean, ended: boolean }> = []
  const { url } = await serverWith(t, (fastify) => {
    fastify.get('/', (request, reply) => {
      const look = () => { seen.push({ sent: reply.sent, ended: reply.raw.writableEnded }) }
      reply.send('held')
      look()
      // Immediates run in the order they were queued: each look runs just after the batch's end
      // of turn (queued by the send, then again by that end of turn).
      setImmediate(() => { look(); setImmediate(look) })
    })
  })
  const answer = await get(url)
  t.same(answer, { status: 200, body: 'held', socketReused: false })
  t.same(seen, [{ sent: false, ended: false }, { sent: false, ended: false }, { sent: true, ended: true }],
    'not written in the handler\'s turn nor at its end (that turn brought an answer), written at the end of the next, which brought none')
})

t.test('a batch waits while each turn brings more answers, at most four turns', async (t) => {
  const written: string[] = []
  const hold = (name: string) => { holdAnswer({} as FastifyReply, name, () => { written.push(name) }) }
  const turn = () => new Promise<void>((resolve) => { setImmediate(resolve) })
  // Turns 1 to 3 each bring an answer: the batch waits for the next.
  hold('a')
  await turn()
  t.same(written, [], 'the first turn brought an answer')
  hold('b')
  await turn()
  hold('c')
  await turn()
  t.same(written, [], 'the second and third turns brought answers')
  hold('d')
  await turn()
  t.same(written, ['a', 'b', 'c', 'd'], 'written at the end of the fourth turn, though it brought one more')
  // A turn that brings none ends the batch.
  hold('e')
  await turn()
  hold('f')
  await turn()
  t.same(written, ['a', 'b', 'c', 'd'])
  await turn()
  t.same(written, ['a', 'b', 'c', 'd', 'e', 'f'], 'written at the end of the first turn that brought none')
})

t.test('a handler or hook that sends and then resolves is answered once, and its connection lives on', async (t) => {
  const handled: string[] = []
  const { url, lines } = await serverWith(t, (fastify) => {
    // Both forget to return the reply: with the answer held, Fastify sends again (undefined from
    // the handler; the handler's own answer after the hook).
    fastify.get('/handler', async (request, reply) => { reply.send('once') })
    fastify.register(async (hooked) => {
      hooked.addHook('onRequest', async (request, reply) => { reply.code(403).send('hook') })
      hooked.get('/hooked', async () => {
        handled.push('hooked')
        return 'the handler\'s answer is dropped'
      })
    })
  })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  t.same(await get(`${url}/handler`, agent), { status: 200, body: 'once', socketReused: false })
  t.same(await get(`${url}/handler`, agent), { status: 200, body: 'once', socketReused: true }, 'the same connection answers again')
  t.same(lines, [], 'nothing logged: the handler\'s resolution without a payload is no second answer')
  t.same(await get(`${url}/hooked`, agent), { status: 403, body: 'hook', socketReused: true })
  t.same(await get(`${url}/hooked`, agent), { status: 403, body: 'hook', socketReused: true })
  t.same(lines.map((line) => line.msg), [
    'Reply was already sent, did you forget to "return reply" in the "/hooked" (GET) route?',
    'Reply was already sent, did you forget to "return reply" in the "/hooked" (GET) route?'
  ], 'the handler\'s answer after the hook\'s is dropped, with Fastify\'s warning')
  t.same(handled, ['hooked', 'hooked'], 'the handler ran (a hook must return the reply it sent to stop it, as Fastify documents)')
})

t.test('an answer that cannot be written is logged and its connection closed; the rest of its batch goes out', async (t) => {
  const { url, lines } = await serverWith(t, (fastify) => {
    // Node refuses a line break in a header value when the head is written, after the hold.
    fastify.get('/bad', (request, reply) => { reply.header('x-bad', 'a\nb').send('never') })
    fastify.get('/good', (request, reply) => { reply.send('good') })
  })
  const answers = await Promise.allSettled([get(`${url}/bad`), get(`${url}/good`), get(`${url}/bad`), get(`${url}/good`)])
  t.equal(answers[0]!.status, 'rejected', 'the bad answer\'s client sees its connection end')
  t.equal(answers[2]!.status, 'rejected')
  t.same(answers[1], { status: 'fulfilled', value: { status: 200, body: 'good', socketReused: false } })
  t.same(answers[3], { status: 'fulfilled', value: { status: 200, body: 'good', socketReused: false } })
  t.same(lines.map((line) => line.msg), ['an answer could not be written', 'an answer could not be written'])
  t.same(await get(`${url}/good`), { status: 200, body: 'good', socketReused: false }, 'the server goes on')
})

t.test('answers of one batch go out in the order their requests were handled', async (t) => {
  const handled: string[] = []
  const written: string[] = []
  const { url } = await serverWith(t, (fastify) => {
    fastify.get('/:name', (request, reply) => {
      const { name } = request.params as { name: string }
      handled.push(name)
      reply.raw.once('finish', () => { written.push(name) })
      reply.send(name)
    })
  })
  const names = Array.from({ length: 20 }, (_, i) => `n${i}`)
  const answers = await Promise.all(names.map((name) => get(`${url}/${name}`)))
  t.same(answers.map((answer) => answer.body), names)
  t.same(written, handled, 'written in the order handled')
})

t.test('a large answer\'s next chunk waits for the answers held before it', async (t) => {
  const order: string[] = []
  // The chunk's turn is asked for first, as a large answer's is, then a small answer is held.
  const chunk = nextTurn().then(() => { order.push('chunk') })
  holdAnswer({} as FastifyReply, 'small', () => { order.push('held answer') })
  await chunk
  t.same(order, ['held answer', 'chunk'])
})

t.test('a large answer\'s next chunk waits while turns bring answers, four turns more at most', async (t) => {
  // The turns a chunk's nextTurn takes, counted by a tick a turn that holds a small answer in
  // each when told to, as a steady stream of small requests does.
  const turnsOfNextTurn = async (holding: boolean): Promise<number> => {
    let ticks = 0
    let stopped = false
    const tick = () => {
      if (stopped) return
      ticks++
      if (holding) holdAnswer({} as FastifyReply, 'small', () => {})
      setImmediate(tick)
    }
    tick()
    const before = ticks
    await turnAfterHeldAnswers()
    stopped = true
    return ticks - before
  }
  t.equal(await turnsOfNextTurn(true), 5, 'its own turn, then four more, each of which brought an answer')
  // Let the last held answers go, so the next measurement starts with none.
  await turnAfterHeldAnswers()
  t.equal(await turnsOfNextTurn(false), 1, 'with no answers held, the chunk goes on at the next turn')
})

/** A reply as holdAnswer sees it: only its status is read. */
const replyOf = (statusCode: number) => ({ statusCode }) as unknown as FastifyReply

/** What happened first: a one-millisecond timer set now, or nextTurn ending (a paced turn waits two). */
async function firstOf (): Promise<'timer' | 'turn'> {
  let timerFired = false
  const timer = setTimeout(() => { timerFired = true }, 1)
  await nextTurn()
  clearTimeout(timer)
  return timerFired ? 'timer' : 'turn'
}

t.test('a large answer\'s next chunk waits a pace more while other consumers are served, and none once they stop', async (t) => {
  // Past the window of whatever the tests before held.
  await sleep(20)
  t.notOk(bulkWorkPaced(), 'no answer held lately: no pace')
  t.equal(await firstOf(), 'turn', 'unpaced, the chunk goes on in the next turn')

  holdAnswer(replyOf(200), Buffer.from('small'), () => {})
  t.ok(bulkWorkPaced(), 'a served answer held: paced')
  t.equal(await firstOf(), 'timer', 'paced, the chunk waited past a timer of a millisecond')
  await sleep(20)
  t.notOk(bulkWorkPaced(), 'no answer since: the chunks go on at a turn each')

  holdAnswer(replyOf(304), '', () => {})
  t.ok(bulkWorkPaced(), 'a 304 is a served answer too')
  await sleep(20)

  holdAnswer(replyOf(401), Buffer.from('{"error":"unauthorized_request"}'), () => {})
  holdAnswer(replyOf(400), 'bad', () => {})
  holdAnswer(replyOf(503), Buffer.from('busy'), () => {})
  t.notOk(bulkWorkPaced(), 'rejections held: no pace (a client flooding bad requests slows no one\'s large answer)')
  // Written out first: while answers are held, the chunk's turn waits a turn more for them, and
  // a timers phase comes between (the one-millisecond timer could fire there, paced or not).
  await turnAfterHeldAnswers()
  t.notOk(bulkWorkPaced(), 'rejections written: still no pace')
  t.equal(await firstOf(), 'turn', 'and the chunk goes on in the next turn')

  holdAnswer(replyOf(200), new PassThrough(), () => {})
  t.notOk(bulkWorkPaced(), 'a streamed answer held (bulk work itself): no pace')
  await sleep(20)
})

t.test('answers written at once count as served when written, and not after', async (t) => {
  await sleep(20)
  // Marked first, as plugins/load-limits.ts marks a connection's answer with requests behind it.
  const atOnce = replyOf(200)
  writeAtOnce(atOnce)
  let written = 0
  holdAnswer(atOnce, Buffer.from('small'), () => { written++ })
  // Read at once: the window is 5 ms, and an assertion's own work comes before the next read.
  const pacedAfterAtOnce = bulkWorkPaced()
  t.equal(written, 1, 'written as it was sent')
  t.ok(pacedAfterAtOnce, 'and paces the bulk work for the window after')
  await sleep(20)
  t.notOk(bulkWorkPaced(), 'not once the window has passed')

  // Held first, then let go at once: no longer held, so no pace once its window has passed.
  const heldFirst = replyOf(200)
  holdAnswer(heldFirst, Buffer.from('small'), () => { written++ })
  t.ok(bulkWorkPaced(), 'held: paced')
  writeAtOnce(heldFirst)
  const pacedAfterLetGo = bulkWorkPaced()
  t.equal(written, 2, 'written when let go')
  t.ok(pacedAfterLetGo, 'just written: paced')
  await sleep(20)
  t.notOk(bulkWorkPaced(), 'written long ago, and none held: no pace')
  t.equal(await firstOf(), 'turn', 'so the chunk goes on in the next turn')
})

t.test('a batch emptied by writeAtOnce leaves the next batch its every turn', async (t) => {
  await sleep(20)
  // The turns until a batch is written, with an answer held in each turn, as a steady stream of
  // requests does: the batch waits while each turn brings more, MAX_BATCH_TURNS at most.
  const turnsToWrite = async (): Promise<number> => {
    const batch = { written: false }
    let turns = 0
    holdAnswer(replyOf(200), 'first', () => { batch.written = true })
    while (!batch.written) {
      await new Promise((resolve) => setImmediate(resolve))
      turns++
      if (!batch.written) holdAnswer(replyOf(200), 'more', () => {})
    }
    await sleep(5)
    return turns
  }
  const fresh = await turnsToWrite()
  // A batch of one answer that lasted a turn, then taken out by writeAtOnce.
  const taken = replyOf(200)
  holdAnswer(taken, 'taken', () => {})
  await new Promise((resolve) => setImmediate(resolve))
  writeAtOnce(taken)
  await sleep(5)
  t.equal(await turnsToWrite(), fresh, 'as many turns as a batch after a written one')
})
