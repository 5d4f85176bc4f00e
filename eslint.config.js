import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.tap/**', 'bench/data/**'] }),
  {
    // TypeBox's idiom: a schema and its Static type share one name, so one import brings both.
    files: ['schemas/**/*.ts'],
    rules: { '@typescript-eslint/no-redeclare': 'off' }
  }
]
