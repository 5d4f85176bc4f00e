import type { ItemError } from '../../schemas/events.js'
import { q, type ContractCase } from './contract-case.js'

// The fixture world (test/fixtures): devices D1..D7 in spaces S1..S5, with hostile IDs.
const S1 = 'bldg-a/floor-1'
const S2 = 'bldg-a/floor-2'
const S4 = 'ruimte-ë-✓ 🚻'
const S5 = 're.*(gex)[1]|$^'
const D1 = 'soap-001'
const D2 = 'towel-002'
const D4 = 'dev\\"4\\'
const D5 = '机器-5'
const D6 = 'dev.+?6'
const QUOTED_ID = 'q"uote\\d id'

const E = '/svc/v2/events?'
const START = 'start_date=2024-01-01T00:00:00Z'
// Same device, code and millisecond: distinct events InfluxDB must not merge; the e-slot pair
// even shares the sub-millisecond slot its message_id hashes to.
const SAME_MS = ['e-14a', 'e-14b', 'e-slot-9054', 'e-slot-949']
const ALL = ['e-00', 'e-01', 'e-02', 'e-03', 'e-04', 'e-05', 'e-06', 'e-07', QUOTED_ID, 'e-09', 'e-10', 'e-11', 'e-12', ...SAME_MS, 'e-13']
const D1_EVENTS = ['e-01', 'e-03', 'e-04', 'e-05', 'e-11']
const S1_EVENTS = ['e-00', 'e-01', 'e-03', 'e-04', 'e-05', 'e-12', ...SAME_MS, 'e-13']

const device = (id: string): ItemError => ({ id, item_type: 'device', message: 'invalid_device' })
const space = (id: string): ItemError => ({ id, item_type: 'space', message: 'invalid_space' })
const tag = (id: string): ItemError => ({ id, item_type: 'tag', message: 'invalid_tag' })

export const authenticationCases: ContractCase[] = [
  { name: 'no Authorization header', url: E + START, authorization: null, error: 'unauthorized_request' },
  { name: 'unknown token', url: E + START, authorization: 'Bearer nope', error: 'unauthorized_request' },
  { name: 'a prefix of a valid token', url: E + START, authorization: 'Bearer test-token', error: 'unauthorized_request' },
  { name: 'another scheme', url: E + START, authorization: 'Basic dGVzdC10b2tlbi0x', error: 'unauthorized_request' },
  { name: 'scheme without token', url: E + START, authorization: 'Bearer', error: 'unauthorized_request' },
  { name: 'token without scheme', url: E + START, authorization: 'test-token-1', error: 'unauthorized_request' },
  { name: 'the scheme is case-insensitive', url: E + START, authorization: 'bearer test-token-1', ids: ALL, errors: [] },
  { name: 'every configured token is accepted', url: E + START, authorization: 'Bearer test-token-2', ids: ALL, errors: [] },
  { name: '401 comes before an unknown parameter', url: E + 'foo=1', authorization: null, error: 'unauthorized_request' },
  { name: '401 comes before a missing parameter', url: '/svc/v2/events', authorization: null, error: 'unauthorized_request' },
  { name: '401 comes before an unknown path', url: '/svc/v2/nothing', authorization: null, error: 'unauthorized_request' },
  { name: 'an unknown path is 404 not_found', url: '/svc/v2/nothing', error: 'not_found' },
  { name: 'a path differing in case is 404', url: '/svc/v2/Events?' + START, error: 'not_found' },
  { name: 'the specifications endpoint needs a token too', url: '/svc/v2/event_specifications', authorization: 'Bearer x', error: 'unauthorized_request' }
]

export const eventRuleCases: ContractCase[] = [
  { name: 'unknown parameter', url: E + START + '&foo=1', error: 'invalid_parameter' },
  { name: 'parameter names are case-sensitive', url: E + 'Start_Date=2024-01-01T00:00:00Z', error: 'invalid_parameter' },
  { name: 'an empty parameter name is unknown', url: E + START + '&=x', error: 'invalid_parameter' },
  { name: 'a name that cannot be decoded is unknown', url: E + START + '&%E0%A4%A=1', error: 'invalid_parameter' },
  { name: 'unknown is checked before duplicate', url: E + 'foo=1&' + START + '&' + START, error: 'invalid_parameter' },
  { name: 'percent-encoded names are decoded', url: E + 'start%5Fdate=2024-01-01T00:00:00Z', ids: ALL, errors: [] },
  { name: 'repeated start_date', url: E + START + '&' + START, error: 'duplicate_parameter' },
  { name: 'repeated list parameter', url: E + START + '&device_ids=a&device_ids=b', error: 'duplicate_parameter' },
  { name: 'a repeat spelled differently is still a repeat', url: E + START + '&start%5Fdate=2024-01-01T00:00:00Z', error: 'duplicate_parameter' },
  { name: 'a repeat without a value is still a repeat', url: E + START + '&message_ids&message_ids', error: 'duplicate_parameter' },
  { name: 'duplicate is checked before missing', url: E + 'device_ids=a&device_ids=a', error: 'duplicate_parameter' },
  { name: 'no query at all', url: '/svc/v2/events', error: 'missing_parameter' },
  { name: 'an empty query', url: E, error: 'missing_parameter' },
  { name: 'only separators', url: E + '&&', error: 'missing_parameter' },
  { name: 'no start_date', url: E + 'device_ids=' + D1, error: 'missing_parameter' },
  { name: 'missing is checked before the combination', url: E + 'message_ids=a&message_codes=b', error: 'missing_parameter' },
  { name: 'message_ids with message_codes', url: E + START + '&message_ids=a&message_codes=b', error: 'invalid_parameter_combination' },
  { name: 'message_ids with message_category', url: E + START + '&message_ids=a&message_category=alert', error: 'invalid_parameter_combination' },
  { name: 'all three exclusive filters', url: E + START + '&message_ids=a&message_category=alert&message_codes=b', error: 'invalid_parameter_combination' },
  { name: 'the combination is checked before values', url: E + START + '&message_category=nope&message_codes=b', error: 'invalid_parameter_combination' },
  { name: 'the combination is checked before dates', url: E + 'start_date=bad&message_ids=a&message_category=alert', error: 'invalid_parameter_combination' },
  { name: 'an unknown category', url: E + START + '&message_category=warning', error: 'invalid_parameter' },
  { name: 'categories are case-sensitive', url: E + START + '&message_category=Alert', error: 'invalid_parameter' },
  { name: 'an empty category', url: E + START + '&message_category=', error: 'invalid_parameter' },
  { name: 'an empty list', url: E + START + '&device_ids=', error: 'invalid_parameter' },
  { name: 'a list of only commas and blanks', url: E + START + '&space_ids=' + q(' , ,'), error: 'invalid_parameter' },
  { name: 'an empty message_ids', url: E + START + '&message_ids', error: 'invalid_parameter' },
  { name: 'values are checked before dates', url: E + 'start_date=bad&tag_ids=', error: 'invalid_parameter' },
  { name: 'start_date not a date', url: E + 'start_date=yesterday', error: 'invalid_start_date' },
  { name: 'start_date empty', url: E + 'start_date=', error: 'invalid_start_date' },
  { name: 'start_date without a time', url: E + 'start_date=2025-01-01', error: 'invalid_start_date' },
  { name: 'start_date without an offset', url: E + 'start_date=2025-01-01T00:00:00', error: 'invalid_start_date' },
  { name: 'start_date on February 30', url: E + 'start_date=2024-02-30T00:00:00Z', error: 'invalid_start_date' },
  { name: 'start_date on February 29 of a common year', url: E + 'start_date=2025-02-29T00:00:00Z', error: 'invalid_start_date' },
  { name: 'start_date at hour 24', url: E + 'start_date=2025-01-01T24:00:00Z', error: 'invalid_start_date' },
  { name: 'start_date with an offset beyond 23:59', url: E + 'start_date=2025-01-01T00:00:00+24:00', error: 'invalid_start_date' },
  { name: 'start_date in the future', url: E + 'start_date=2999-01-01T00:00:00Z', error: 'invalid_start_date' },
  { name: 'start_date with trailing text', url: E + 'start_date=2025-01-01T00:00:00Zjunk', error: 'invalid_start_date' },
  { name: 'a bad start_date wins over a bad end_date', url: E + 'start_date=x&end_date=y', error: 'invalid_start_date' },
  { name: 'end_date not a date', url: E + START + '&end_date=tomorrow', error: 'invalid_end_date' },
  { name: 'end_date empty', url: E + START + '&end_date=', error: 'invalid_end_date' },
  { name: 'end_date equal to start_date', url: E + START + '&end_date=2024-01-01T00:00:00.000Z', error: 'invalid_end_date' },
  { name: 'end_date equal to start_date in another offset', url: E + START + '&end_date=' + q('2024-01-01T01:00:00+01:00'), error: 'invalid_end_date' },
  { name: 'end_date before start_date', url: E + START + '&end_date=2023-12-31T23:59:59Z', error: 'invalid_end_date' },
  { name: 'end_date in the future', url: E + START + '&end_date=2999-01-01T00:00:00Z', error: 'invalid_end_date' },
  { name: 'end_date on an impossible day', url: E + START + '&end_date=2025-04-31T00:00:00Z', error: 'invalid_end_date' },
  { name: 'February 29 of a leap year', url: E + 'start_date=2024-02-29T00:00:00Z', ids: ALL, errors: [] },
  { name: 'lower-case t and z', url: E + 'start_date=2024-01-01t00:00:00z', ids: ALL, errors: [] },
  { name: 'fractional seconds of any length', url: E + 'start_date=2024-01-01T00:00:00.123456789Z', ids: ALL, errors: [] },
  { name: 'an unencoded + offset arrives as a space and still counts', url: E + 'start_date=2025-01-08T01:00:00+01:00', ids: ['e-10', 'e-11', 'e-12', ...SAME_MS, 'e-13'], errors: [] },
  { name: 'a negative offset', url: E + 'start_date=' + q('2025-01-07T19:00:00-05:00'), ids: ['e-10', 'e-11', 'e-12', ...SAME_MS, 'e-13'], errors: [] }
]

export const eventSemanticCases: ContractCase[] = [
  { name: 'every event of every known entity, by time then message_id', url: E + START, ids: ALL, errors: [] },
  { name: 'start is inclusive and end exclusive', url: E + 'start_date=2025-01-02T10:00:00.000Z&end_date=2025-01-04T00:00:00.000Z', ids: ['e-03', 'e-04', 'e-05'], errors: [] },
  { name: 'a start a fraction of a millisecond later excludes the event at the millisecond', url: E + 'start_date=2025-01-02T10:00:00.0001Z&end_date=2025-01-04T00:00:00.0001Z', ids: ['e-04', 'e-05', 'e-06'], errors: [] },
  { name: 'end_date defaults to now', url: E + 'start_date=2025-01-31T00:00:00Z', ids: ['e-13'], errors: [] },
  { name: 'no match is 200 with empty data', url: E + 'start_date=2026-01-01T00:00:00Z', ids: [], errors: [] },
  { name: 'one device', url: E + START + '&device_ids=' + D1, ids: D1_EVENTS, errors: [] },
  { name: 'list items are trimmed and repeats ignored; unknown devices reported once', url: E + START + '&device_ids=' + q(` ${D1} ,nope,${D1},nope`), ids: D1_EVENTS, errors: [device('nope')] },
  { name: 'blank items in a list are skipped', url: E + START + '&device_ids=' + q(`,${D1},,`), ids: D1_EVENTS, errors: [] },
  { name: 'a known device without events', url: E + START + '&device_ids=spare-7', ids: [], errors: [] },
  { name: 'a space holds its own events and those of devices while they were there', url: E + START + '&space_ids=' + q(S2), ids: ['e-02', 'e-06', 'e-11'], errors: [] },
  { name: 'a device that moved away is not in its old space', url: E + START + '&space_ids=' + q(S1), ids: S1_EVENTS, errors: [] },
  { name: 'a tag of a space', url: E + START + '&tag_ids=floor-1', ids: S1_EVENTS, errors: [] },
  { name: 'a tag of a device', url: E + START + '&tag_ids=' + q('soap dispensers'), ids: D1_EVENTS, errors: [] },
  { name: 'a tag of devices and spaces', url: E + START + '&tag_ids=' + q('mixed/tag (1)'), ids: ['e-06', QUOTED_ID, 'e-09', 'e-10'], errors: [] },
  { name: 'an empty tag', url: E + START + '&tag_ids=empty', ids: [], errors: [] },
  { name: 'devices, spaces and tags combine as a union, without repeats', url: E + START + '&device_ids=' + q(D6) + '&space_ids=' + q(S2) + '&tag_ids=' + q('soap dispensers'), ids: ['e-01', 'e-02', 'e-03', 'e-04', 'e-05', 'e-06', 'e-09', 'e-11'], errors: [] },
  { name: 'unknown devices, spaces and tags are reported in that order', url: E + START + '&tag_ids=t1,floor-1&space_ids=s1&device_ids=d1', ids: S1_EVENTS, errors: [device('d1'), space('s1'), tag('t1')] },
  { name: 'only unknown entities: empty data and the errors', url: E + START + '&device_ids=x&space_ids=y&tag_ids=z', ids: [], errors: [device('x'), space('y'), tag('z')] },
  { name: 'message_codes narrows the set', url: E + START + '&message_codes=LOW_LEVEL,EMPTY', ids: ['e-00', 'e-01', 'e-05', 'e-07', 'e-11', 'e-12', ...SAME_MS], errors: [] },
  { name: 'an unknown message code matches nothing', url: E + START + '&message_codes=NOPE', ids: [], errors: [] },
  { name: 'message_category alert', url: E + START + '&message_category=alert', ids: ['e-00', 'e-04', 'e-06', 'e-07', 'e-09', 'e-12', ...SAME_MS], errors: [] },
  { name: 'message_category notification narrows the entities', url: E + START + '&message_category=notification&device_ids=' + D1, ids: ['e-01', 'e-03', 'e-05', 'e-11'], errors: [] },
  { name: 'events of one device in one millisecond, by message_id', url: E + 'start_date=2025-01-20T00:00:00Z&end_date=2025-01-22T00:00:00Z&device_ids=' + D2, ids: SAME_MS, errors: [] },
  { name: 'message_ids in any order come back in time order', url: E + START + '&message_ids=e-05,e-00,nope', ids: ['e-00', 'e-05'], errors: [] },
  { name: 'message_ids within the entities asked for', url: E + START + '&device_ids=' + D2 + '&message_ids=e-01,e-12', ids: ['e-12'], errors: [] },
  { name: 'message_ids outside the window', url: E + 'start_date=2025-01-09T00:00:00Z&message_ids=e-00,e-13', ids: ['e-13'], errors: [] },
  { name: 'events of an unknown device are never returned', url: E + START + '&message_ids=e-ghost-1,e-ghost-2', ids: [], errors: [] },
  { name: 'quotes and backslashes in a device ID', url: E + START + '&device_ids=' + q(D4), ids: ['e-07'], errors: [] },
  { name: 'regex characters in IDs are literal', url: E + START + '&space_ids=' + q(S5) + '&device_ids=' + q('dev.*'), ids: ['e-09'], errors: [device('dev.*')] },
  { name: 'unicode IDs', url: E + START + '&device_ids=' + q(D5) + '&space_ids=' + q(S4), ids: [QUOTED_ID, 'e-10'], errors: [] },
  { name: 'a message_id with quotes, backslash and space', url: E + START + '&message_ids=' + q(QUOTED_ID), ids: [QUOTED_ID], errors: [] },
  // No stored identifier holds a control character, so these match nothing, on every store.
  { name: 'a line feed in a message code matches nothing', url: E + START + '&message_codes=A%0AB', ids: [], errors: [] },
  { name: 'a carriage return beside a real code', url: E + START + '&message_codes=EMPTY,A%0DB', ids: ['e-00', 'e-07', 'e-12', ...SAME_MS], errors: [] },
  { name: 'a NUL in a message code', url: E + START + '&message_codes=EMPTY%00', ids: [], errors: [] },
  { name: 'control characters in message_ids (white space at either end is trimmed, as for every list item)', url: E + START + '&message_ids=e-00%0A,e-05,%00e-01,e%0D-03', ids: ['e-00', 'e-05'], errors: [] },
  { name: 'a tab and a DEL in message_ids', url: E + START + '&message_ids=e-00%09x,e-05%7F', ids: [], errors: [] },
  { name: 'control characters in entity IDs are unknown entities', url: E + START + '&device_ids=soap%0A001&space_ids=%00&tag_ids=fl%0Door-1', ids: [], errors: [device('soap\n001'), space('\u0000'), tag('fl\roor-1')] },
  {
    name: 'the wire form: field order, UTC milliseconds, escaping',
    url: E + 'start_date=2025-01-05T00:00:00Z&end_date=2025-01-07T00:00:00.001Z&device_ids=' + q(D4) + ',' + q(D6) + ',ghost',
    body: '{"data":[' +
      '{"message_id":"e-07","message_code":"EMPTY","message_category":"alert","date_time":"2025-01-05T14:45:00.000Z","device_id":"dev\\\\\\"4\\\\","space_id":"room \\"quoted\\" \\\\ back"},' +
      '{"message_id":"e-09","message_code":"MACHINE_ERROR","message_category":"alert","date_time":"2025-01-07T00:00:00.000Z","device_id":"dev.+?6","space_id":"re.*(gex)[1]|$^"}' +
      '],"errors":[{"id":"ghost","item_type":"device","message":"invalid_device"}]}'
  },
  {
    name: 'an event before 1970 keeps its millisecond',
    url: E + 'start_date=1969-12-31T00:00:00Z&end_date=1970-01-01T00:00:00Z',
    body: '{"data":[{"message_id":"e-old","message_code":"LOW_LEVEL","message_category":"notification","date_time":"1969-12-31T23:59:59.998Z","device_id":"soap-001","space_id":"bldg-a/floor-1"}],"errors":[]}'
  },
  {
    name: 'a space event has no device_id; offsets become UTC',
    url: E + 'start_date=2025-01-01T06:00:00Z&end_date=2025-01-01T07:00:00Z',
    body: '{"data":[{"message_id":"e-02","message_code":"OCCUPANCY_HIGH","message_category":"notification","date_time":"2025-01-01T06:30:00.500Z","space_id":"bldg-a/floor-2"}],"errors":[]}'
  }
]

export const eventCases: ContractCase[] = [...authenticationCases, ...eventRuleCases, ...eventSemanticCases]
