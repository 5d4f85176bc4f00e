import t from 'tap'
import pino from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { LazyRequestLogger } from '../src/http/lazy-request-logger.js'

/** A pino logger at `level` writing its lines into an array, counting the children made of it. */
function recordingLogger (level: string) {
  const lines: Array<Record<string, unknown>> = []
  const logger = pino({ level }, { write: (line: string) => { lines.push(JSON.parse(line)) } })
  const made = { children: 0 }
  const child = logger.child
  // Children inherit this method: each is made from the logger it is called on.
  logger.child = function (this: typeof logger, bindings, options) {
    made.children++
    return child.call(this, bindings, options)
  } as typeof logger.child
  return { lines, made, logger: logger as unknown as FastifyBaseLogger }
}

t.test('nothing is made for a level the logger does not write', async (t) => {
  const { lines, made, logger } = recordingLogger('warn')
  const requestLog = new LazyRequestLogger(logger, { reqId: 'req-1' }, {})
  requestLog.info({ detail: 1 }, 'not written')
  requestLog.debug('not written')
  requestLog.trace('not written')
  t.equal(made.children, 0, 'no child logger made')
  t.same(lines, [])
  t.equal(requestLog.level, 'warn')
})

t.test('a written line carries the request\'s bindings, through one child made on first use', async (t) => {
  const { lines, made, logger } = recordingLogger('info')
  const requestLog = new LazyRequestLogger(logger, { reqId: 'req-7' }, {})
  requestLog.warn({ url: '/x' }, 'first')
  requestLog.info('second')
  requestLog.debug('not written')
  requestLog.error(new Error('third'))
  t.equal(made.children, 1, 'one child, made once')
  t.same(lines.map((line) => [line.reqId, line.msg, line.level]), [['req-7', 'first', 40], ['req-7', 'second', 30], ['req-7', 'third', 50]])
  t.equal(lines[0]!.url, '/x')
})

t.test('a child of it and a level set on it apply to the request\'s logger only', async (t) => {
  const { lines, logger } = recordingLogger('warn')
  const requestLog = new LazyRequestLogger(logger, { reqId: 'req-9' }, {})
  requestLog.child({ token: 'acme-fm' }).warn('named')
  requestLog.level = 'debug'
  requestLog.debug('now written')
  t.equal(logger.level, 'warn', 'the parent keeps its level')
  t.same(lines.map((line) => [line.reqId, line.token, line.msg]), [['req-9', 'acme-fm', 'named'], ['req-9', undefined, 'now written']])
})
