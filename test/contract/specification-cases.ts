import type { ItemError } from '../../schemas/events.js'
import type { ContractCase } from './contract-case.js'

const S = '/svc/v2/event_specifications'
const code = (id: string): ItemError => ({ id, item_type: 'message_code', message: 'invalid_message_code' })

export const specificationCases: ContractCase[] = [
  { name: 'no parameters: every code, in file order, in English', url: S, specifications: [['LOW_LEVEL', ['eng']], ['EMPTY', ['eng']], ['REFILLED', ['eng']], ['BATTERY_LOW', ['eng']]], errors: [] },
  { name: 'a language adds its details where a code has them (file order)', url: S + '?languages=fra', specifications: [['LOW_LEVEL', ['eng', 'fra']], ['EMPTY', ['fra', 'eng']], ['REFILLED', ['eng']], ['BATTERY_LOW', ['eng']]], errors: [] },
  { name: 'unsupported and repeated languages are omitted; case does not matter', url: S + '?languages=xxx,FRA,fra,english&message_codes=LOW_LEVEL', specifications: [['LOW_LEVEL', ['eng', 'fra']]], errors: [] },
  { name: 'several languages', url: S + '?languages=deu,nld&message_codes=BATTERY_LOW,LOW_LEVEL', specifications: [['BATTERY_LOW', ['eng', 'nld']], ['LOW_LEVEL', ['eng', 'deu']]], errors: [] },
  { name: 'asking for English changes nothing', url: S + '?languages=eng&message_codes=REFILLED', specifications: [['REFILLED', ['eng']]], errors: [] },
  { name: 'unknown codes are reported; repeats ignored', url: S + '?message_codes=EMPTY,NOPE,EMPTY,%20NOPE', specifications: [['EMPTY', ['eng']]], errors: [code('NOPE')] },
  { name: 'only unknown codes', url: S + '?message_codes=A,B', specifications: [], errors: [code('A'), code('B')] },
  {
    name: 'the wire form',
    url: S + '?message_codes=REFILLED',
    body: '{"data":[{"message_code":"REFILLED","message_category":"notification","details":[{"language":"eng","description":"Refilled","root_cause":"A refill was detected","solution":"None"}]}],"errors":[]}'
  },
  { name: 'unknown parameter', url: S + '?message_code=EMPTY', error: 'invalid_parameter' },
  { name: 'start_date is not a parameter here', url: S + '?start_date=2024-01-01T00:00:00Z', error: 'invalid_parameter' },
  { name: 'duplicate parameter', url: S + '?languages=fra&languages=deu', error: 'duplicate_parameter' },
  { name: 'unknown is checked before duplicate', url: S + '?languages=fra&languages=deu&x=1', error: 'invalid_parameter' },
  { name: 'an empty list', url: S + '?message_codes=', error: 'invalid_parameter' },
  { name: 'an empty languages list', url: S + '?languages=,', error: 'invalid_parameter' }
]

/** With SPECIFICATIONS_FILE=none. */
export const notImplementedCases: ContractCase[] = [
  { name: 'not implemented: 204 with the code in a header', url: S, error: 'not_implemented' },
  { name: 'not implemented, with parameters', url: S + '?message_codes=EMPTY&languages=fra', error: 'not_implemented' },
  { name: 'not implemented, whatever the values (an empty list)', url: S + '?message_codes=&languages=,', error: 'not_implemented' },
  { name: 'not implemented still needs a token', url: S, authorization: null, error: 'unauthorized_request' },
  { name: 'not implemented still rejects unknown parameters', url: S + '?x=1', error: 'invalid_parameter' }
]
