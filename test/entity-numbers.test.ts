import t from 'tap'
import { EntityNumberSet, entityNumber, entityNumberCount } from '../src/data/entity-numbers.js'

t.test('an ID keeps its number; a new ID gets the next one', async (t) => {
  const before = entityNumberCount()
  const a = entityNumber('entity-numbers-test-a')
  t.equal(a, before)
  t.equal(entityNumber('entity-numbers-test-b'), before + 1)
  t.equal(entityNumber('entity-numbers-test-a'), a, 'the same number again')
  t.equal(entityNumberCount(), before + 2)
})

for (const size of [0, 1, 8, 9, 200]) {
  t.test(`a set of ${size} IDs holds their numbers and no other`, async (t) => {
    const ids = Array.from({ length: size }, (_, i) => `entity-numbers-set-${size}-${i}`)
    const outside = entityNumber(`entity-numbers-outside-${size}`)
    const set = new EntityNumberSet(ids)
    for (const id of ids) t.ok(set.has(entityNumber(id)), id)
    t.notOk(set.has(outside), 'a number given before, not a member')
    t.notOk(set.has(entityNumber(`entity-numbers-later-${size}`)), 'a number given after, not a member')
    t.notOk(set.has(-1), 'no entity')
  })
}
