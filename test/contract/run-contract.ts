import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { Value } from '@sinclair/typebox/value'
import { ErrorCode } from '../../schemas/error.js'
import { EventsResponse } from '../../schemas/events.js'
import { SpecificationsResponse } from '../../schemas/specifications.js'
import { ERROR_CODE_HEADER } from '../../src/http/replies.js'
import { TOKEN } from '../helper.js'
import type { ContractCase } from './contract-case.js'

/** Runs a table of contract cases against a ready provider, whatever store it runs on. */
export async function runContractCases (t: Test, app: () => FastifyInstance, cases: readonly ContractCase[]): Promise<void> {
  for (const contract of cases) {
    await t.test(contract.name, async (t) => {
      const headers: Record<string, string> = { ...contract.headers }
      const authorization = contract.authorization === undefined ? `Bearer ${TOKEN}` : contract.authorization
      if (authorization !== null) headers.authorization = authorization
      const response = await app().inject({ method: 'GET', url: contract.url, headers })

      if (contract.error !== undefined) {
        const status = ErrorCode[contract.error]
        t.equal(response.statusCode, status, 'status')
        if (status === 204) {
          t.equal(response.body, '', 'no body on 204')
          t.equal(response.headers[ERROR_CODE_HEADER], contract.error, 'code in the header')
        } else {
          t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
          t.same(response.json(), { status, message: contract.error }, 'error object')
        }
        return
      }

      t.equal(response.statusCode, 200, 'status')
      t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
      if (contract.body !== undefined) t.equal(response.body, contract.body, 'exact body')
      const body = response.json()
      if (contract.ids !== undefined) {
        t.ok(Value.Check(EventsResponse, body), 'an events object')
        t.same(body.data.map((message: { message_id: string }) => message.message_id), contract.ids, 'message_ids in order')
      }
      if (contract.specifications !== undefined) {
        t.ok(Value.Check(SpecificationsResponse, body), 'an event_specifications object')
        t.same(
          body.data.map((specification: { message_code: string, details: Array<{ language: string }> }) =>
            [specification.message_code, specification.details.map((detail) => detail.language)]),
          contract.specifications,
          'codes and languages in order'
        )
      }
      if (contract.errors !== undefined) t.same(body.errors, contract.errors, 'item errors')
    })
  }
}
